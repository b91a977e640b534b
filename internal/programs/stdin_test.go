package programs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/testbin"
)

// initProject makes dir a git repository with a harness switched on and one
// task, through the built harness command bin/harness.
func initProject(t *testing.T, bin, dir string, env []string) {
	t.Helper()
	for _, args := range [][]string{{"git", "init", "-q"}, {"git", "commit", "-q", "--allow-empty", "-m", "base"},
		{filepath.Join(bin, "harness"), "init"}, {filepath.Join(bin, "harness"), "add", "A task", "--validate", "true"}} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
}

// A hook whose stdin is never closed (a parent that wrote the payload and
// kept the pipe open, or a person running it by hand) waits 10 s for the
// end of it, then decides on what arrived: it never hangs, and a whole
// payload still gets its answer.
func TestHookStdinLeftOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the executables and waits out the hooks' 10 s")
	}
	t.Parallel()
	bin := testbin.Build(t)
	dir, locks, records := t.TempDir(), t.TempDir(), t.TempDir()
	env := append(os.Environ(), "CLAUDE_PROJECT_DIR="+dir, "HARNESS_LOCK_DIR="+locks, "HARNESS_RECORD_DIR="+records,
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
	initProject(t, bin, dir, env)

	tasks := filepath.Join(dir, "harness-tasks.json")
	tests := []struct {
		name, hook, payload string
		want                string // in its stdout
	}{
		{"a whole payload is answered", "pre-tool-use",
			`{"session_id":"s1","hook_event_name":"PreToolUse","cwd":"` + dir + `","tool_name":"Write","tool_input":{"file_path":"` + tasks + `","content":"{}"}}`,
			`"permissionDecision":"deny"`},
		// Stop's answer to a payload it cannot read, while work remains.
		{"a cut payload is one that does not read", "stop", `{"session_id":"s1","hook_event_name":"Stop","cw`,
			"eligible work remains"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(filepath.Join(bin, "harness-"+tt.hook))
			cmd.Dir, cmd.Env = dir, env
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			defer stdin.Close() // only once the hook has ended
			_, err = stdin.Write([]byte(tt.payload))
			require.NoError(t, err)
			done := make(chan error, 1)
			start := time.Now()
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				require.NoError(t, err, "stderr: %s", stderr.String())
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("harness-%s still waits on its stdin after 60 s", tt.hook)
			}
			assert.GreaterOrEqual(t, time.Since(start), 9*time.Second, "it did not wait for the rest")
			assert.Contains(t, stdout.String(), tt.want)
		})
	}
}
