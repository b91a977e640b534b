package programs

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/testbin"
)

// endsEarly are the systems internal/quiet ends a hook early on (its
// off_unix.go).
var endsEarly = map[string]bool{"linux": true, "darwin": true, "freebsd": true, "netbsd": true}

// Each hook executable ends where the harness cannot be on for its call
// before the packages it links are initialised (internal/quiet: unicode's
// tables, a package every hook links, are never set up), and runs whole
// wherever it has something to act on. GODEBUG=inittrace=1 has the Go
// runtime name each package as it initialises it.
func TestHooksEndEarlyWhereTheHarnessIsOff(t *testing.T) {
	if !endsEarly[runtime.GOOS] {
		t.Skip("no early end on " + runtime.GOOS + " (internal/quiet)")
	}
	bin := testbin.Build(t)
	records := t.TempDir()
	env := append(os.Environ(), "HARNESS_RECORD_DIR="+records, "HARNESS_LOCK_DIR="+t.TempDir(), "CLAUDE_PROJECT_DIR=", "HARNESS_STATE_ROOT=", "GODEBUG=inittrace=1",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
	project := func(active bool) string {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		initProject(t, bin, dir, env)
		if !active {
			require.NoError(t, os.Remove(filepath.Join(dir, ".harness-active")))
		}
		return dir
	}
	none, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	on, off := project(true), project(false)

	// run runs the hook in dir and reports whether it ran whole. Its line
	// in the debug log says the same.
	run := func(t *testing.T, hook, event, dir, payload string) (whole bool, stdout string) {
		// A check after a tool call keeps its judgement once the files
		// have been still for two seconds, and the next such hook ends on
		// it (TestPostToolUseEndsOnAKeptJudgement): none is kept here.
		kept, err := filepath.Glob(filepath.Join(records, "*", "judged.txt"))
		require.NoError(t, err)
		for _, f := range kept {
			require.NoError(t, os.Remove(f))
		}
		hookLog := filepath.Join(t.TempDir(), "hooks.jsonl")
		cmd := exec.Command(filepath.Join(bin, "harness-"+hook))
		cmd.Dir, cmd.Env = dir, append(env, "HARNESS_HOOK_LOG="+hookLog)
		cmd.Stdin = strings.NewReader(payload)
		var out, errs strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errs
		err = cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 2 || hook != "teammate-idle" { // keeps a teammate working
			require.NoError(t, err, "stderr: %s", errs.String())
		}
		require.Contains(t, errs.String(), "init runtime @", "no init trace")
		whole = strings.Contains(errs.String(), "init unicode @")
		logged, err := os.ReadFile(hookLog)
		require.NoError(t, err, "no line in the debug log")
		assert.Equal(t, 1, strings.Count(string(logged), "\n"), "%s", logged)
		assert.Equal(t, !whole, strings.Contains(string(logged), `"quiet":true`), "%s", logged)
		assert.Contains(t, string(logged), `"session_id":"s1"`)
		assert.Contains(t, string(logged), `"event":"`+event+`"`)
		return whole, out.String()
	}
	payload := func(event, dir string) string {
		return `{"session_id":"s1","hook_event_name":"` + event + `","cwd":"` + dir + `","tool_name":"Write","tool_input":{"file_path":"` +
			filepath.Join(dir, "harness-tasks.json") + `","content":"{}"},"stop_hook_active":false}`
	}
	events := map[string]string{
		"pre-tool-use": "PreToolUse", "post-tool-use": "PostToolUse", "post-tool-use-failure": "PostToolUseFailure",
		"stop": "Stop", "subagent-stop": "SubagentStop", "session-start": "SessionStart", "session-end": "SessionEnd",
		"user-prompt-submit": "UserPromptSubmit", "pre-compact": "PreCompact", "stop-failure": "StopFailure",
		"teammate-idle": "TeammateIdle", "config-change": "ConfigChange",
	}
	// A project switched off is no root to the hooks that act only where
	// the harness is on, nor, once its record says so, to SessionStart and
	// UserPromptSubmit, which only settle that; the others still judge the
	// files against the record.
	whollyOff := map[string]bool{"pre-tool-use": true, "subagent-stop": true, "pre-compact": true, "stop-failure": true,
		"teammate-idle": true, "config-change": true, "session-start": true, "user-prompt-submit": true}
	whole, out := run(t, "session-start", "SessionStart", off, payload("SessionStart", off))
	require.True(t, whole, "the first session start after the switching off settles the record")
	require.Empty(t, out)
	for hook, event := range events {
		t.Run(hook, func(t *testing.T) {
			whole, out := run(t, hook, event, none, payload(event, none))
			assert.False(t, whole, "ran whole where there is no project")
			assert.Empty(t, out)

			whole, _ = run(t, hook, event, off, payload(event, off))
			assert.Equal(t, !whollyOff[hook], whole, "in a project switched off")

			whole, _ = run(t, hook, event, on, payload(event, on))
			assert.True(t, whole, "ended early in a project switched on")
		})
	}

	// A payload past the first part Off reads (a Write of a large file)
	// is left to the hook, silent all the same.
	big := `{"session_id":"s1","hook_event_name":"PreToolUse","cwd":"` + none + `","tool_name":"Write","tool_input":{"file_path":"` +
		filepath.Join(none, "big.txt") + `","content":"` + strings.Repeat("x", 300<<10) + `"}}`
	whole, out = run(t, "pre-tool-use", "PreToolUse", none, big)
	assert.True(t, whole)
	assert.Empty(t, out)

	// The hook still judges a call in a project switched on, from anywhere
	// below it, and its answer is unchanged.
	sub := filepath.Join(on, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	whole, out = run(t, "pre-tool-use", "PreToolUse", sub,
		`{"session_id":"s1","hook_event_name":"PreToolUse","cwd":"`+sub+`","tool_name":"Write","tool_input":{"file_path":"`+filepath.Join(on, "harness-tasks.json")+`","content":"{}"}}`)
	assert.True(t, whole)
	assert.Contains(t, out, `"permissionDecision":"deny"`)
}

// After a tool call that changed no harness file, the check keeps its
// judgement, and the next PostToolUse (or PostToolUseFailure) of the
// session ends on it before its packages are initialised. A harness file
// changed by the next tool call moves a stat the judgement rests on: that
// hook runs whole and puts the file back; another session's hook runs
// whole too.
func TestPostToolUseEndsOnAKeptJudgement(t *testing.T) {
	if !endsEarly[runtime.GOOS] {
		t.Skip("no early end on " + runtime.GOOS + " (internal/quiet)")
	}
	bin, dir, records, env := tracedProject(t)
	run := func(hook, session string) (whole bool, stdout string) {
		t.Helper()
		return runTraced(t, bin, hook, dir, append(env, "CLAUDE_CODE_SESSION_ID="+session), `{"session_id":"`+session+
			`","hook_event_name":"PostToolUse","cwd":"`+dir+`","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok"}}`)
	}
	tasks := filepath.Join(dir, "harness-tasks.json")
	before, err := os.ReadFile(tasks)
	require.NoError(t, err)

	whole, _ := run("post-tool-use", "s1") // the session's first look at the marker, recorded
	require.True(t, whole)
	time.Sleep(2100 * time.Millisecond) // a judgement is kept of files still for two seconds
	whole, out := run("post-tool-use", "s1")
	require.True(t, whole, "ended before a judgement was kept")
	require.Empty(t, out)
	for _, hook := range []string{"post-tool-use", "post-tool-use-failure", "post-tool-use"} {
		whole, out = run(hook, "s1")
		assert.False(t, whole, "%s ran whole on a judgement that holds", hook)
		assert.Empty(t, out)
	}
	whole, _ = run("post-tool-use", "s2")
	assert.True(t, whole, "another session's hook ended on s1's judgement")

	// The next tool call breaks the tasks file: the hook runs whole and
	// puts it back.
	require.NoError(t, os.WriteFile(tasks, []byte("{broken"), 0o644))
	whole, out = run("post-tool-use", "s1")
	assert.True(t, whole)
	assert.Contains(t, out, "HARNESS TAMPER")
	after, err := os.ReadFile(tasks)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))

	// Where the agent can write the record (the standard level), a tool
	// call that breaks the tasks file and forges the judgement to match
	// gets past the next PostToolUse, not past the turn's end: Stop's
	// check never reads the judgement.
	time.Sleep(2100 * time.Millisecond)
	run("post-tool-use", "s1")
	judged, err := filepath.Glob(filepath.Join(records, "*", "judged.txt"))
	require.NoError(t, err)
	require.Len(t, judged, 1)
	text, err := os.ReadFile(judged[0])
	require.NoError(t, err)
	stat := func() string {
		fi, err := os.Lstat(tasks)
		require.NoError(t, err)
		return record.StampOf(fi).String()
	}
	old := stat()
	require.NoError(t, os.WriteFile(tasks, []byte("{broken"), 0o644))
	require.NoError(t, os.WriteFile(judged[0], []byte(strings.Replace(string(text), old, stat(), 1)), 0o600))
	whole, _ = run("post-tool-use", "s1")
	require.False(t, whole, "the forged judgement was not taken: the case is not the one meant")
	stop := exec.Command(filepath.Join(bin, "harness-stop"))
	stop.Dir, stop.Env = dir, append(env, "CLAUDE_CODE_SESSION_ID=s1")
	stop.Stdin = strings.NewReader(`{"session_id":"s1","hook_event_name":"Stop","cwd":"` + dir + `","stop_hook_active":false}`)
	out2, err := stop.CombinedOutput()
	require.NoError(t, err, "%s", out2)
	after, err = os.ReadFile(tasks)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the turn's end left the broken tasks file")
}

// tracedProject builds the executables and sets up a project switched on
// with one task, in an environment of its own (its record directory
// records) in which the Go runtime traces each package's initialisation
// (runTraced).
func tracedProject(t *testing.T) (bin, dir, records string, env []string) {
	bin = testbin.Build(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	records = t.TempDir()
	env = append(os.Environ(), "HARNESS_RECORD_DIR="+records, "HARNESS_LOCK_DIR="+t.TempDir(), "CLAUDE_PROJECT_DIR="+dir,
		"HARNESS_STATE_ROOT=", "GODEBUG=inittrace=1",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
	initProject(t, bin, dir, env)
	return bin, dir, records, env
}

// runTraced runs the hook executable in dir with payload and reports
// whether it ran whole (the Go runtime's trace names unicode's
// initialisation: env has GODEBUG=inittrace=1); its line in the debug log
// says the same.
func runTraced(t *testing.T, bin, hook, dir string, env []string, payload string) (whole bool, stdout string) {
	t.Helper()
	hookLog := filepath.Join(t.TempDir(), "hooks.jsonl")
	cmd := exec.Command(filepath.Join(bin, "harness-"+hook))
	cmd.Dir, cmd.Env = dir, append(env, "HARNESS_HOOK_LOG="+hookLog)
	cmd.Stdin = strings.NewReader(payload)
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	require.NoError(t, cmd.Run(), "stderr: %s", errs.String())
	require.Contains(t, errs.String(), "init runtime @", "no init trace")
	whole = strings.Contains(errs.String(), "init unicode @")
	logged, err := os.ReadFile(hookLog)
	require.NoError(t, err, "no line in the debug log")
	assert.Equal(t, !whole, strings.Contains(string(logged), `"quiet":true`), "%s", logged)
	return whole, out.String()
}

// In a project switched off, once its record says so and the check after
// a tool call (or at a turn's end) kept its judgement, Stop and
// UserPromptSubmit end before their packages are initialised; a harness
// file touched since makes the next Stop run whole (and judge it).
func TestSwitchedOffHooksEndEarly(t *testing.T) {
	if !endsEarly[runtime.GOOS] {
		t.Skip("no early end on " + runtime.GOOS + " (internal/quiet)")
	}
	bin, dir, _, env := tracedProject(t)
	env = append(env, "CLAUDE_CODE_SESSION_ID=s1")
	require.NoError(t, os.Remove(filepath.Join(dir, ".harness-active")))
	payload := func(event, more string) string {
		return `{"session_id":"s1","hook_event_name":"` + event + `","cwd":"` + dir + `"` + more + `}`
	}
	run := func(hook, event, more string) bool {
		t.Helper()
		whole, out := runTraced(t, bin, hook, dir, env, payload(event, more))
		assert.Empty(t, out)
		return whole
	}
	const bash = `,"tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":""}`
	require.True(t, run("session-start", "SessionStart", `,"source":"startup"`), "the start that settles the switching off")
	log, err := os.ReadFile(filepath.Join(dir, "harness-progress.txt"))
	require.NoError(t, err)
	require.Contains(t, string(log), "INIT Harness switched off")
	assert.False(t, run("user-prompt-submit", "UserPromptSubmit", `,"prompt":"hi"`))
	assert.True(t, run("stop", "Stop", `,"stop_hook_active":false`), "a turn's end with no judgement kept")
	time.Sleep(2100 * time.Millisecond)
	assert.True(t, run("post-tool-use", "PostToolUse", bash), "the check that keeps its judgement")
	assert.False(t, run("post-tool-use", "PostToolUse", bash))
	assert.False(t, run("stop", "Stop", `,"stop_hook_active":false`))

	now := time.Now()
	require.NoError(t, os.Chtimes(filepath.Join(dir, "harness-tasks.json"), now, now))
	assert.True(t, run("stop", "Stop", `,"stop_hook_active":false`), "a turn's end after the tasks file was touched")

	// Turns without a tool call: a turn's end that finds nothing changed
	// keeps the judgement itself, and the next one ends on it.
	time.Sleep(2100 * time.Millisecond)
	assert.True(t, run("stop", "Stop", `,"stop_hook_active":false`), "the turn's end that keeps its judgement")
	assert.False(t, run("stop", "Stop", `,"stop_hook_active":false`))
	assert.False(t, run("post-tool-use", "PostToolUse", bash))
}
