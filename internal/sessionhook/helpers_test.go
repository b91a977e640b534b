package sessionhook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/root"
)

// sessionID is the Claude Code session the tests play.
const sessionID = "sess-test"

// project makes an active state root holding tasks (a harness-tasks.json
// text) and points every environment variable the hooks read at it, so a
// test never sees the machine's locks or the caller's settings.
func testProject(t *testing.T, tasks string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	isolate(t, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "harness-tasks.json"), []byte(tasks), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, root.ActiveMarker), nil, 0o644))
	return dir
}

// isolate sets the environment of a hook running for the project dir.
func isolate(t *testing.T, dir string) {
	t.Helper()
	for k, v := range map[string]string{
		"HARNESS_LOCK_DIR":                t.TempDir(),
		"CLAUDE_PID":                      "1", // alive: the session lock's holder
		"CLAUDE_CODE_SESSION_ID":          sessionID,
		"CLAUDE_PROJECT_DIR":              dir,
		"HARNESS_STATE_ROOT":              "",
		"HARNESS_WORKER_ID":               "",
		"HARNESS_STOP_VALVE":              "",
		"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "",
		"HARNESS_REFLECT_ITERATIONS":      "",
		"REFLECT_MAX_ITERATIONS":          "",
		"HARNESS_INIT_TIMEOUT":            "",
		"HARNESS_VERIFY_BUDGET":           "",
		"HARNESS_HOOK_LOG":                "",
		"HOME":                            t.TempDir(),
		"GIT_CONFIG_NOSYSTEM":             "1",
	} {
		t.Setenv(k, v)
	}
}

// payload is a hook payload of event with the session id and the fields kv
// (name, value pairs).
func payload(t *testing.T, event string, kv ...any) hook.Payload {
	t.Helper()
	m := map[string]any{"session_id": sessionID, "hook_event_name": event, "transcript_path": "/nonexistent"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	data, err := json.Marshal(m)
	require.NoError(t, err)
	return hook.Parse(data)
}

// tasksJSON renders a state with the given task objects and extra top-level
// members (session_config and the like).
func tasksJSON(sessionCount int, extra string, tasks ...string) string {
	if extra != "" {
		extra += ",\n  "
	}
	return "{\n  \"version\": 2,\n  " + extra + "\"tasks\": [\n    " + strings.Join(tasks, ",\n    ") +
		"\n  ],\n  \"session_count\": " + itoa(sessionCount) + ",\n  \"last_session\": null\n}\n"
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// logLines returns the progress log's lines.
func logLines(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(progress.Path(dir))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

// appendLog appends raw lines to the progress log.
func appendLog(t *testing.T, dir string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(progress.Path(dir), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer f.Close()
	for _, l := range lines {
		_, err := f.WriteString(l + "\n")
		require.NoError(t, err)
	}
}

// writeState replaces the tasks file, as a harness verb would.
func writeState(t *testing.T, dir, tasks string) {
	t.Helper()
	path := filepath.Join(dir, "harness-tasks.json")
	tmp := path + ".tmp-test"
	require.NoError(t, os.WriteFile(tmp, []byte(tasks), 0o644))
	require.NoError(t, os.Rename(tmp, path)) // a new inode, as every state write makes
}
