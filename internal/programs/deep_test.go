package programs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/testbin"
)

// Ten million nested brackets, as a hook payload or inside the tasks file,
// once killed every hook and `harness status` with Go's "fatal error: stack
// overflow" (exit 2, in gjson's recursive validator). Now the nesting is
// bounded before anything parses: each hook gives its usual answer to a
// payload it cannot read and says why on stderr, and the harness treats
// the file as corrupt.
func TestDeepJSONNeverCrashes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the executables")
	}
	t.Parallel()
	bin := testbin.Build(t)

	dir, locks, records := t.TempDir(), t.TempDir(), t.TempDir()
	run := func(name, stdin string, args ...string) (string, string, int) {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+dir, "HARNESS_LOCK_DIR="+locks, "HARNESS_RECORD_DIR="+records)
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return stdout.String(), stderr.String(), code
	}
	_, stderr, code := run("harness", "", "init")
	require.Equal(t, 0, code, stderr)
	_, stderr, code = run("harness", "", "add", "A task", "--validate", "true")
	require.Equal(t, 0, code, stderr)

	deep := strings.Repeat("[", 10_000_000)
	for _, hook := range hookCommands {
		t.Run(hook, func(t *testing.T) {
			stdout, stderr, code := run("harness-"+hook, `{"hook_event_name":"x","tool_input":`+deep)
			assert.NotContains(t, stderr, "fatal error")
			if hook == "teammate-idle" && code == 2 {
				// Its usual answer while work remains: keep working.
				assert.Contains(t, stderr, "eligible work remains")
				return
			}
			assert.Equal(t, 0, code, "stderr: %.300s", stderr)
			assert.Contains(t, stderr, "payload ignored: the payload nests deeper than 1000 levels")
			if s := strings.TrimSpace(stdout); s != "" {
				assert.True(t, strings.HasPrefix(s, "{"), "stdout is one JSON object or nothing: %.300s", s)
			}
		})
	}

	// A tasks file nested that deep is corrupt: shown from the backup with
	// a warning, then from the record's copy, then refused with the
	// protocol's error once no copy is left. Never a crash.
	tasks := filepath.Join(dir, "harness-tasks.json")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"tasks": [], "x": `+deep), 0o644))
	stdout, stderr, code := run("harness", "", "status")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "WARN harness-tasks.json does not read (nests deeper than 1000 levels); showing harness-tasks.json.bak")
	require.NoError(t, os.Remove(tasks+".bak"))
	stdout, stderr, code = run("harness", "", "status")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "showing the record's copy")
	require.NoError(t, os.RemoveAll(records))
	_, stderr, code = run("harness", "", "status")
	assert.Equal(t, 2, code)
	assert.NotContains(t, stderr, "fatal error")
	assert.Contains(t, stderr, "ERROR [ENV_SETUP] harness-tasks.json corrupted and unrecoverable")

	// A settings file nested that deep is refused like any unreadable one
	// and left as it was.
	proj := t.TempDir()
	settings := filepath.Join(proj, ".claude", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(settings), 0o755))
	body := `{"hooks": ` + deep + `}`
	require.NoError(t, os.WriteFile(settings, []byte(body), 0o644))
	_, stderr, code = run("harness", "", "hooks", "status", "--project", proj)
	assert.Equal(t, 2, code, stderr)
	assert.NotContains(t, stderr, "fatal error")
	assert.Contains(t, stderr, "settings.json is not valid JSON: it nests deeper than 1000 levels")
	after, err := os.ReadFile(settings)
	require.NoError(t, err)
	assert.Equal(t, len(body), len(after), "the settings file was changed")
}
