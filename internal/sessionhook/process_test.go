package sessionhook_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/programs"
)

// The test binary doubles as every harness executable: with
// HARNESS_TEST_PROGRAM set it runs that program's entry point (the one the
// hooks/<name>/main.go binaries call) and exits with its code.
func TestMain(m *testing.M) {
	if name := os.Getenv("HARNESS_TEST_PROGRAM"); name != "" {
		os.Exit(programs.Run(name))
	}
	os.Exit(m.Run())
}

// result is what a hook process did.
type result struct {
	stdout, stderr string
	code           int
}

// runHook runs the hook program name in dir with stdin and the environment
// env (on top of an isolated base).
func runHook(t *testing.T, name, dir string, stdin []byte, env ...string) result {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".locks"), 0o755))
	cmd := exec.Command(os.Args[0])
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append([]string{
		"HARNESS_TEST_PROGRAM=" + name,
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"HARNESS_LOCK_DIR=" + filepath.Join(dir, ".locks"),
		"CLAUDE_PROJECT_DIR=" + dir,
		"CLAUDE_PID=1",
		"CLAUDE_CODE_SESSION_ID=sess-p",
		"GIT_CONFIG_NOSYSTEM=1",
	}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{out.String(), errb.String(), code}
}

var hooks = []struct{ program, event string }{
	{"harness-session-start", "SessionStart"},
	{"harness-stop", "Stop"},
	{"harness-subagent-stop", "SubagentStop"},
	{"harness-teammate-idle", "TeammateIdle"},
	{"harness-session-end", "SessionEnd"},
}

// hostile are payloads a hook must survive with a safe decision.
var hostile = map[string][]byte{
	"empty":          nil,
	"whitespace":     []byte(" \n\t "),
	"invalid json":   []byte(`{"session_id": "x",`),
	"array":          []byte(`[{"session_id":"sess-p"}]`),
	"string":         []byte(`"Stop"`),
	"null":           []byte(`null`),
	"cwd 42":         []byte(`{"session_id":"sess-p","cwd":42,"hook_event_name":"Stop","stop_hook_active":"yes","source":7}`),
	"cwd elsewhere":  []byte(`{"session_id":"sess-p","cwd":"/nonexistent/dir"}`),
	"hostile ids":    []byte(`{"session_id":"../../../etc/passwd","agent_id":{"x":1},"teammate_name":["a"],"transcript_path":"/dev/zero","last_assistant_message":null}`),
	"binary junk":    {0x00, 0xff, 0xfe, '{', 0x01, '"', 0x80, 0x81, '\n', 0x7f},
	"deep nesting":   []byte(strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)),
	"huge message":   []byte(`{"session_id":"sess-p","last_assistant_message":"` + strings.Repeat("x", 1<<20) + `"}`),
	"unknown fields": []byte(`{"session_id":"sess-p","hook_event_name":"Stop","future_field":{"nested":[1,2,3]},"stop_hook_active":false}`),
}

// states are the projects the hooks meet.
var states = map[string]struct {
	tasks  string
	active bool
}{
	"inactive":       {`{"version":2,"tasks":[{"id":"t1","status":"pending","validation":{"command":"true"}}],"session_count":0}`, false},
	"active work":    {`{"version":2,"tasks":[{"id":"t1","status":"pending","validation":{"command":"true"}}],"session_count":0}`, true},
	"active done":    {`{"version":2,"tasks":[{"id":"t1","status":"completed","validation":{"command":"true"}}],"session_count":0,"last_session":null}`, true},
	"active corrupt": {`{"version":2,"tasks":[{"id"`, true},
}

// checkOutput asserts the Claude Code contract: stdout is empty or exactly
// one JSON object whose shape fits the event; exit 0, or 2 for a refusal
// with the reason on stderr; never a crash.
func checkOutput(t *testing.T, event string, r result) {
	t.Helper()
	assert.NotContains(t, r.stderr, "panic")
	assert.NotContains(t, r.stderr, "internal error")
	switch r.code {
	case 0:
	case 2:
		assert.Equal(t, "TeammateIdle", event, "only TeammateIdle refuses with exit 2")
		assert.NotEmpty(t, strings.TrimSpace(r.stderr), "exit 2 needs its reason on stderr")
		assert.Empty(t, r.stdout)
		return
	default:
		t.Fatalf("exit %d (Claude Code fails open): %s", r.code, r.stderr)
	}
	if r.stdout == "" {
		return
	}
	require.True(t, strings.HasSuffix(r.stdout, "}\n") && strings.HasPrefix(r.stdout, "{"), "one JSON object: %q", r.stdout)
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var out map[string]any
	require.NoError(t, dec.Decode(&out))
	assert.False(t, dec.More(), "exactly one JSON object")
	for k := range out {
		assert.Contains(t, []string{"decision", "reason", "hookSpecificOutput", "systemMessage"}, k)
	}
	if d, ok := out["decision"]; ok {
		assert.Equal(t, "block", d)
		assert.Contains(t, []string{"Stop", "SubagentStop"}, event)
		assert.NotEmpty(t, out["reason"])
	}
	if hs, ok := out["hookSpecificOutput"].(map[string]any); ok {
		assert.Equal(t, event, hs["hookEventName"])
		assert.Equal(t, "SessionStart", event, "only SessionStart gives context")
		assert.NotEmpty(t, hs["additionalContext"])
	}
}

func TestHooksSurviveHostileInput(t *testing.T) {
	for stateName, st := range states {
		for inputName, input := range hostile {
			for _, h := range hooks {
				t.Run(stateName+"/"+inputName+"/"+h.program, func(t *testing.T) {
					t.Parallel()
					dir, err := filepath.EvalSymlinks(t.TempDir())
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(filepath.Join(dir, "harness-tasks.json"), []byte(st.tasks), 0o644))
					if st.active {
						require.NoError(t, os.WriteFile(filepath.Join(dir, ".harness-active"), nil, 0o644))
					}
					r := runHook(t, h.program, dir, input)
					checkOutput(t, h.event, r)
					if !st.active {
						assert.Empty(t, r.stdout, "an inactive harness prints nothing")
						assert.Empty(t, r.stderr, "an inactive harness prints nothing")
						assert.Equal(t, 0, r.code)
						assert.NoFileExists(t, filepath.Join(dir, "harness-progress.txt"), "and writes nothing")
					}
				})
			}
		}
	}
}

func TestOutputShapes(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("harness-tasks.json", `{"version":2,"tasks":[{"id":"t1","title":"One","status":"in_progress","validation":{"command":"true"}},{"id":"t2","title":"Two","status":"pending","validation":{"command":"true"}}],"session_count":0,"last_session":null}`)
	write(".harness-active", "")

	r := runHook(t, "harness-session-start", dir, []byte(`{"session_id":"sess-p","hook_event_name":"SessionStart","source":"startup"}`))
	checkOutput(t, "SessionStart", r)
	assert.Regexp(t, `^\{"hookSpecificOutput":\{"additionalContext":"HARNESS SESSION-1 \(startup; exclusive\)[^"]*`, r.stdout)
	assert.Empty(t, r.stderr)

	r = runHook(t, "harness-stop", dir, []byte(`{"session_id":"sess-p","hook_event_name":"Stop","stop_hook_active":false}`))
	checkOutput(t, "Stop", r)
	assert.Regexp(t, `^\{"decision":"block","reason":"HARNESS: eligible work remains`, r.stdout)
	assert.Empty(t, r.stderr)

	r = runHook(t, "harness-subagent-stop", dir, []byte(`{"session_id":"sess-p","hook_event_name":"SubagentStop","agent_id":"a1","stop_hook_active":false}`))
	checkOutput(t, "SubagentStop", r)
	assert.Regexp(t, `^\{"decision":"block","reason":"HARNESS: t1: One is still in progress`, r.stdout)

	r = runHook(t, "harness-teammate-idle", dir, []byte(`{"session_id":"sess-p","hook_event_name":"TeammateIdle","teammate_name":"bob"}`))
	checkOutput(t, "TeammateIdle", r)
	assert.Equal(t, 2, r.code)
	assert.Equal(t, "HARNESS: eligible work remains: run `harness claim t2` to start t2: Two.\n", r.stderr)

	r = runHook(t, "harness-session-end", dir, []byte(`{"session_id":"sess-p","hook_event_name":"SessionEnd","reason":"other"}`))
	checkOutput(t, "SessionEnd", r)
	assert.Empty(t, r.stdout+r.stderr)

	// HARNESS_HOOK_LOG appends one JSON line per invocation.
	logPath := filepath.Join(dir, "hooks.jsonl")
	r = runHook(t, "harness-stop", dir, []byte(`{"session_id":"sess-p","hook_event_name":"Stop"}`), "HARNESS_HOOK_LOG="+logPath)
	data, err := os.ReadFile(logPath)
	require.NoError(t, err)
	var line map[string]any
	require.NoError(t, json.Unmarshal(data, &line))
	assert.Equal(t, "Stop", line["event"])
	assert.Equal(t, "block", line["decision"])
}
