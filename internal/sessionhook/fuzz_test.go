package sessionhook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/root"
)

// The fuzz targets' seed corpora run with every `go test`; explore further
// with `go test -fuzz=FuzzPayload ./internal/lifecycle` (or FuzzState). Both
// run whole hooks (state transactions, git) per input, so they explore
// slowly; hook.FuzzParse covers the payload parser itself, fast.

var lifecycleHooks = []struct {
	event  string
	decide func(hook.Payload) hook.Decision
}{
	{hook.SessionStart, SessionStart},
	{hook.Stop, Stop},
	{hook.SubagentStop, SubagentStop},
	{hook.TeammateIdle, TeammateIdle},
	{hook.SessionEnd, SessionEnd},
}

// fuzzProject is an active project for a fuzz target, set up once per
// process: the hooks run against it for every input.
func fuzzProject(f *testing.F, tasks string) string {
	dir, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	for k, v := range map[string]string{
		"HARNESS_LOCK_DIR": f.TempDir(), "CLAUDE_PID": "1", "CLAUDE_CODE_SESSION_ID": sessionID,
		"CLAUDE_PROJECT_DIR": dir, "HARNESS_STATE_ROOT": "", "HARNESS_WORKER_ID": "", "HOME": f.TempDir(),
		"HARNESS_INIT_TIMEOUT": "", "HARNESS_HOOK_LOG": "", "GIT_CONFIG_NOSYSTEM": "1",
	} {
		f.Setenv(k, v)
	}
	if err := os.WriteFile(filepath.Join(dir, "harness-tasks.json"), []byte(tasks), 0o644); err != nil {
		f.Fatal(err)
	}
	return dir
}

// checkRendered fails t unless d renders as Claude Code wants it: nothing, or
// one JSON object; exit 0, or 2 for a refusal.
func checkRendered(t *testing.T, event string, d hook.Decision) {
	var out, errb bytes.Buffer
	code := hook.Render(event, d, &out, &errb)
	if code != 0 && !(code == 2 && d.Kind == hook.Refuse) {
		t.Fatalf("%s: exit %d", event, code)
	}
	if out.Len() == 0 {
		return
	}
	dec := json.NewDecoder(&out)
	var v map[string]any
	if err := dec.Decode(&v); err != nil || dec.More() {
		t.Fatalf("%s: stdout is not one JSON object: %q (%v)", event, out.String(), err)
	}
}

func FuzzPayload(f *testing.F) {
	dir := fuzzProject(f, tasksJSON(0, "", task("task-001", "pending"), task("task-002", "in_progress")))
	for _, seed := range []string{
		"", "{}", "null", "[]", `"x"`, "{", "\x00\xff\xfe",
		`{"session_id":"s","hook_event_name":"Stop","stop_hook_active":true}`,
		`{"session_id":"s","source":"compact"}`,
		`{"session_id":"../../x","transcript_path":"/dev/zero"}`,
		`{"session_id":"s","agent_id":"a","teammate_name":"bob"}`,
		`{"session_id":"s","last_assistant_message":"REFLECT-DONE","stop_hook_active":"true"}`,
		`{"session_id":{"a":1},"source":["startup"],"stop_hook_active":1}`,
		`{"session_id":"s","cwd":42}`, `{"cwd":["/"]}`, `{"cwd":{"path":"/"}}`, `{"cwd":null,"source":"compact"}`,
	} {
		f.Add([]byte(seed))
	}
	marker := filepath.Join(dir, root.ActiveMarker)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := hook.Parse(data)
		if p.Get("cwd").Type == gjson.String {
			// A cwd names the session's git work tree: keep the fuzzer out
			// of real ones (the test's own directory is in one). A cwd of
			// any other type is ignored by the hooks, and fuzzed.
			t.Skip()
		}
		os.WriteFile(marker, nil, 0o644)
		for _, h := range lifecycleHooks {
			checkRendered(t, h.event, h.decide(p))
		}
	})
}

func FuzzState(f *testing.F) {
	dir := fuzzProject(f, "{}")
	for _, seed := range []string{
		tasksJSON(0, "", task("task-001", "pending")),
		tasksJSON(3, `"session_config": {"concurrency_mode": "concurrent", "max_sessions": 2, "max_tasks_per_session": 1, "verify_on_stop": false, "max_reflect_iterations": 9}`,
			task("task-001", "in_progress", `"claimed_by": "w"`, `"lease_expires_at": "nonsense"`), task("task-002", "pending", `"depends_on": ["task-002"]`)),
		tasksJSON(1, "", task("task-001", "completed"), task("task-002", "failed", `"attempts": 9`, `"max_attempts": 1`)),
		`{"tasks": [{"id": "a", "status": "pending", "depends_on": ["b"]}, {"id": "b", "status": "pending", "depends_on": ["a"]}]}`,
		`{"tasks": [{"id": "a", "status": "pending", "checkpoints": [{"step": -1}]}]}`,
		`{"tasks": "none"}`, `{"tasks": [1, null, "x"]}`, `[]`, `{`, "", "\xff",
		`{"tasks": [{"id": "a", "status": "in_progress", "title": "` + strings.Repeat("é", 300) + `"}], "session_count": 1e300}`,
	} {
		f.Add([]byte(seed))
	}
	path := filepath.Join(dir, "harness-tasks.json")
	marker := filepath.Join(dir, root.ActiveMarker)
	stopPayload := hook.Parse([]byte(`{"session_id":"` + sessionID + `","hook_event_name":"Stop"}`))
	startPayload := hook.Parse([]byte(`{"session_id":"` + sessionID + `","source":"compact"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		os.WriteFile(path, data, 0o644)
		os.Remove(path + ".bak")
		os.WriteFile(marker, nil, 0o644)
		checkRendered(t, hook.SessionStart, SessionStart(startPayload))
		for _, h := range lifecycleHooks[1:4] {
			checkRendered(t, h.event, h.decide(stopPayload))
		}
	})
}
