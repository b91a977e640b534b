package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The documented exit codes of the cycle verbs: 0 ok, 1 negative outcome,
// 2 usage/config/environment error. Run in-process, one step after another.
func TestCycleExitCodes(t *testing.T) {
	for k, v := range map[string]string{"HARNESS_STATE_ROOT": "", "CLAUDE_PROJECT_DIR": "", "CLAUDE_CODE_SESSION_ID": "",
		"CLAUDE_PID": "", "HARNESS_WORKER_ID": "w1", "HARNESS_LEASE_SECONDS": "", "HARNESS_LOCK_DIR": t.TempDir(),
		"HOME": t.TempDir(), "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	sh := func(script string) {
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", script, out)
	}
	run := func(args ...string) (int, string) {
		var out bytes.Buffer
		e := &Env{Stdout: &out, Stderr: &out, Now: time.Now, Cwd: dir}
		return e.Run(args), out.String()
	}

	code, _ := run("init")
	require.Equal(t, ExitOK, code)
	for _, verb := range []string{"claim", "checkpoint", "validate", "fail", "recover", "renew", "stats", "snapshots"} {
		code, out := run(verb, "--help")
		assert.Equal(t, ExitOK, code, verb)
		assert.Contains(t, out, "usage: harness "+verb, verb)
	}
	run("add", "Pass me", "--validate", "test -f done.txt", "--priority", "P0")
	run("add", "No check")
	code, out := run("claim")
	assert.Equal(t, ExitError, code, "not a git repository: %s", out)
	sh("git init -q && git add -A && git commit -q -m baseline")

	for _, step := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"claim"}, ExitOK, "Claimed task-001"},
		{[]string{"claim"}, ExitError, "ERROR [USAGE] task-001 is already in progress"},
		{[]string{"claim", "a", "b"}, ExitError, "ERROR [USAGE]"},
		{[]string{"checkpoint", "task-001", "1/2", "half"}, ExitOK, "checkpoint 1/2 recorded"},
		{[]string{"checkpoint", "task-001", "3/2", "x"}, ExitError, "need 1 ≤ M ≤ N"},
		{[]string{"checkpoint", "task-404", "1/2", "x"}, ExitError, "ERROR [CONFIG] no task"},
		{[]string{"renew"}, ExitOK, "renewed task-001"},
		{[]string{"validate", "task-001"}, ExitNegative, "ERROR [task-001] [TEST_FAIL]"},
		{[]string{"validate", "task-001"}, ExitError, "task-001 is failed, not in_progress"},
		{[]string{"snapshots"}, ExitOK, "refs/harness/snapshots/task-001/1"},
		{[]string{"claim", "task-001"}, ExitOK, "attempt 2/3"},
	} {
		code, out := run(step.args...)
		assert.Equal(t, step.code, code, "harness %s: %s", strings.Join(step.args, " "), out)
		assert.Contains(t, out, step.out, "harness %s", strings.Join(step.args, " "))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "done.txt"), []byte("x"), 0o644))
	for _, step := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"validate", "task-001"}, ExitOK, "Completed task-001"},
		{[]string{"claim"}, ExitError, "ERROR [CONFIG] task-002 has no validation command, so it can never be completed"},
		{[]string{"edit", "task-002", "--validate", "placeholder-check"}, ExitOK, "task-002: changed validation.command"},
		{[]string{"claim"}, ExitOK, "Claimed task-002"},
		{[]string{"fail", "task-002", "--category", "NOPE", "x"}, ExitError, "unknown category"},
		{[]string{"fail", "task-002", "--category", "config", "no check"}, ExitOK, "Failed task-002: [CONFIG] no check (attempt 1/3)"},
		{[]string{"claim", "task-001"}, ExitNegative, "none: task-001 is completed"},
		{[]string{"recover"}, ExitOK, "nothing to recover"},
		{[]string{"renew"}, ExitOK, "nothing to renew"},
		{[]string{"stats"}, ExitOK, "STATS tasks_total=2 completed=1 failed=1"},
	} {
		code, out := run(step.args...)
		assert.Equal(t, step.code, code, "harness %s: %s", strings.Join(step.args, " "), out)
		assert.Contains(t, out, step.out, "harness %s", strings.Join(step.args, " "))
	}
}
