package sessionhook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/state"
)

// task renders one task object; fields are extra JSON members, and a
// "validation" among them replaces the default one (a key may appear only
// once in a task).
func task(id, status string, fields ...string) string {
	validation := `"validation": {"command": "true"}`
	f := ""
	for _, field := range fields {
		if strings.HasPrefix(field, `"validation"`) {
			validation = field
			continue
		}
		f += ", " + field
	}
	return fmt.Sprintf(`{"id": %q, "title": "Title of %s", "status": %q, %s%s}`, id, id, status, validation, f)
}

const concurrent = `"session_config": {"concurrency_mode": "concurrent"}`

func stop(t *testing.T, active bool, kv ...any) hook.Decision {
	t.Helper()
	return Stop(payload(t, hook.Stop, append([]any{"stop_hook_active", active}, kv...)...))
}

func TestStopSilentWhenInactive(t *testing.T) {
	dir := testProject(t, tasksJSON(1, "", task("task-001", "pending")))
	require.NoError(t, os.Remove(filepath.Join(dir, root.ActiveMarker)))
	assert.Equal(t, hook.Decision{}, stop(t, false))
	assert.Nil(t, logLines(t, dir))

	// No state root at all.
	t.Setenv("CLAUDE_PROJECT_DIR", t.TempDir())
	assert.Equal(t, hook.Decision{}, Stop(hook.Parse([]byte(`{"cwd":"/"}`))))
}

func TestStopWhileWorkRemains(t *testing.T) {
	future, past := `"lease_expires_at": "2999-01-01T00:00:00Z"`, `"lease_expires_at": "2001-01-01T00:00:00Z"`
	tests := []struct {
		name   string
		worker string
		state  string
		block  bool
		want   []string // substrings of the reason
	}{
		{"pending with dependencies met", "", tasksJSON(1, "",
			task("task-001", "completed"), task("task-002", "pending", `"priority": "P2"`), task("task-003", "pending", `"priority": "P0"`, `"depends_on": ["task-001"]`)),
			true, []string{"pending=2 in_progress=0 completed=1 failed=0 blocked=0 total=3", "next=task-003: Title of task-003", "run `harness claim task-003`"}},
		{"retryable failed", "", tasksJSON(1, "",
			task("task-001", "failed", `"attempts": 1`, `"max_attempts": 3`)),
			true, []string{"next=task-001", "run `harness claim task-001`"}},
		{"own in progress (exclusive: any)", "", tasksJSON(1, "",
			task("task-001", "in_progress", `"claimed_by": "someone"`)),
			true, []string{"continue task-001: Title of task-001 (in progress, yours), then run `harness validate task-001`"}},
		{"concurrent: own claim", "w1", tasksJSON(1, concurrent,
			task("task-001", "in_progress", `"claimed_by": "w1"`, future)),
			true, []string{"continue task-001"}},
		{"concurrent: another worker's live claim", "w1", tasksJSON(1, concurrent,
			task("task-001", "in_progress", `"claimed_by": "w2"`, future), task("task-002", "pending", `"depends_on": ["task-001"]`)),
			false, nil},
		{"concurrent: an expired lease", "w1", tasksJSON(1, concurrent,
			task("task-001", "in_progress", `"claimed_by": "w2"`, past)),
			true, []string{"run `harness recover` (task-001: Title of task-001 is in progress under an expired lease)"}},
		{"pending waiting on a failed-for-good task", "", tasksJSON(1, "",
			task("task-001", "failed", `"attempts": 3`, `"max_attempts": 3`), task("task-002", "pending", `"depends_on": ["task-001"]`)),
			false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testProject(t, tt.state)
			t.Setenv("HARNESS_WORKER_ID", tt.worker)
			t.Setenv("HARNESS_REFLECT_ITERATIONS", "0")
			d := stop(t, false)
			if !tt.block {
				assert.NotEqual(t, hook.Block, d.Kind, d.Reason)
				return
			}
			require.Equal(t, hook.Block, d.Kind)
			assert.True(t, strings.HasPrefix(d.Reason, "HARNESS: eligible work remains, do not stop yet."), d.Reason)
			for _, w := range tt.want {
				assert.Contains(t, d.Reason, w)
			}
		})
	}
}

// claudeCode plays Claude Code's side of a turn's end: it asks the Stop hook
// until the hook lets the turn end, and ends it itself (overriding the hook)
// when a block would exceed its cap of consecutive blocks (0: no cap).
// between runs before each retry: the agent's work after a block.
func claudeCode(blockCap int, hookStop func(active bool) hook.Decision, between func()) (blocks int, overridden bool, last hook.Decision) {
	active := false
	for {
		d := hookStop(active)
		if d.Kind != hook.Block {
			return blocks, false, d
		}
		blocks++
		if blockCap > 0 && blocks > blockCap {
			return blocks, true, d
		}
		active = true
		if between != nil {
			between()
		}
	}
}

func TestValveOpensBeforeClaudeCodesCap(t *testing.T) {
	for _, blockCap := range []string{"", "1", "2", "3", "4", "5", "6", "7", "8", "10", "0"} {
		for _, valve := range []string{"", "1", "3", "7"} {
			t.Run("cap="+blockCap+"/valve="+valve, func(t *testing.T) {
				dir := testProject(t, tasksJSON(1, "", task("task-001", "pending")))
				t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", blockCap)
				t.Setenv("HARNESS_STOP_VALVE", valve)
				effectiveCap := defaultBlockCap
				if blockCap != "" {
					fmt.Sscan(blockCap, &effectiveCap)
				}
				blocks, overridden, last := claudeCode(effectiveCap, func(active bool) hook.Decision { return stop(t, active) }, nil)
				assert.False(t, overridden, "Claude Code had to override the hook after %d blocks", blocks)
				assert.Equal(t, ValveLimit(), blocks)
				assert.LessOrEqual(t, blocks, maxValve)
				assert.Equal(t, hook.Allow, last.Kind)
				assert.Contains(t, last.Warning, "harness stop valve opened")
				assert.Contains(t, strings.Join(logLines(t, dir), "\n"), "WARN harness stop valve opened")
			})
		}
	}
}

func TestProgressKeepsTheSessionWorking(t *testing.T) {
	// Ten tasks; after every block the agent completes one. Each completion is
	// progress, so the valve never opens; the agent works until all are done.
	var tasks []string
	for i := 1; i <= 10; i++ {
		tasks = append(tasks, task(fmt.Sprintf("task-%03d", i), "pending"))
	}
	dir := testProject(t, tasksJSON(1, "", tasks...))
	t.Setenv("HARNESS_REFLECT_ITERATIONS", "0")
	done := 0
	blocks, overridden, last := claudeCode(0, func(active bool) hook.Decision { return stop(t, active) }, func() {
		done++
		for i := 0; i < done; i++ {
			tasks[i] = task(fmt.Sprintf("task-%03d", i+1), "completed")
		}
		writeState(t, dir, tasksJSON(1, "", tasks...))
	})
	assert.False(t, overridden)
	assert.Equal(t, 10, blocks)
	assert.NotEqual(t, hook.Block, last.Kind)
	assert.Empty(t, last.Warning, "the valve did not open")
	assert.NoFileExists(t, filepath.Join(dir, root.ActiveMarker), "the run is over")
}

func TestValveCountsAcrossUselessTurns(t *testing.T) {
	// An agent that answers every block with a tool call but no progress
	// (stop_hook_active false each time, as after tool use) is still stopped
	// by the valve.
	testProject(t, tasksJSON(1, "", task("task-001", "pending")))
	for i := 1; i <= maxValve; i++ {
		d := stop(t, false)
		require.Equal(t, hook.Block, d.Kind, "block %d", i)
		assert.Contains(t, d.Reason, fmt.Sprintf("stop blocked %d of 5 times", i))
	}
	d := stop(t, false)
	assert.Equal(t, hook.Allow, d.Kind)
	assert.Contains(t, d.Warning, "blocked 5 times in a row without progress")
}

func TestStopLimits(t *testing.T) {
	t.Run("max_sessions", func(t *testing.T) {
		dir := testProject(t, tasksJSON(3, `"session_config": {"max_sessions": 2}`, task("task-001", "pending")))
		d := stop(t, false)
		assert.Equal(t, hook.Allow, d.Kind)
		assert.Contains(t, d.Warning, "max_sessions=2 reached")
		assert.Contains(t, logLines(t, dir)[0], "[SESSION-3] STATS tasks_total=1 completed=0 failed=0 pending=1")
		assert.FileExists(t, filepath.Join(dir, root.ActiveMarker))
	})
	t.Run("max_sessions not yet reached", func(t *testing.T) {
		testProject(t, tasksJSON(2, `"session_config": {"max_sessions": 2}`, task("task-001", "pending")))
		assert.Equal(t, hook.Block, stop(t, false).Kind)
	})
	t.Run("max_tasks_per_session", func(t *testing.T) {
		dir := testProject(t, tasksJSON(4, `"session_config": {"max_tasks_per_session": 2}`, task("task-001", "pending")))
		require.NoError(t, (&Runtime{SessionID: sessionID, Session: 4, LogOffset: 0}).save(record.Of(dir)))
		appendLog(t, dir, "[2025-07-01T11:00:01Z] [SESSION-4] Completed [task-009] (commit b)")
		assert.Equal(t, hook.Block, stop(t, false).Kind)
		appendLog(t, dir, "[2025-07-01T11:00:02Z] [SESSION-4] ERROR [task-008] [TASK_EXEC] boom")
		d := stop(t, false)
		assert.Equal(t, hook.Allow, d.Kind)
		assert.Contains(t, d.Warning, "max_tasks_per_session=2 reached (2 task outcomes in SESSION-4)")
	})
}

func TestStopCorruptState(t *testing.T) {
	dir := testProject(t, `{"tasks": [`)
	d := stop(t, false)
	require.Equal(t, hook.Block, d.Kind)
	assert.Contains(t, d.Reason, "ERROR [ENV_SETUP] harness-tasks.json corrupted and unrecoverable")
	d = stop(t, true)
	assert.Equal(t, hook.Allow, d.Kind)
	assert.Contains(t, d.Warning, "WARN: harness state cannot be read")

	// A schema error is shown with its field, the same way.
	writeState(t, dir, `{"tasks": [{"id": "a", "status": "finished"}]}`)
	d = stop(t, false)
	require.Equal(t, hook.Block, d.Kind)
	assert.Contains(t, d.Reason, `ERROR [CONFIG]`)
	assert.Contains(t, d.Reason, `tasks[0].status (a)`)
}

func TestStopStaysOutOfAnotherSessionsHarness(t *testing.T) {
	dir := testProject(t, tasksJSON(1, "", task("task-001", "pending")))
	_, err := lock.Acquire(dir, lock.Holder{PID: 1, SessionID: "the-other"})
	require.NoError(t, err)
	assert.Equal(t, hook.Decision{}, stop(t, false))
	assert.Nil(t, logLines(t, dir))
}

func TestVerificationGate(t *testing.T) {
	dir := testProject(t, tasksJSON(1, "",
		task("task-001", "completed", `"validation": {"command": "sleep 2; test -f one.ok"}`),
		task("task-002", "completed", `"attempts": 1`, `"validation": {"command": "sleep 2; test -f two.ok", "timeout_seconds": 30}`),
		task("task-003", "completed", `"validation": {"command": "touch three.ran"}`)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "one.ok"), nil, 0o644))
	require.NoError(t, (&Runtime{SessionID: sessionID, Session: 1, LogOffset: 0}).save(record.Of(dir)))
	appendLog(t, dir,
		"[2025-07-01T11:00:01Z] [SESSION-1] Completed [task-001] (commit a)",
		"[2025-07-01T11:00:02Z] [SESSION-1] Completed [task-002] (commit b)",
		"[2025-07-01T11:00:03Z] [SESSION-0] Completed [task-003] (commit c)") // an earlier session's

	start := time.Now()
	d := stop(t, false)
	took := time.Since(start)
	require.Equal(t, hook.Block, d.Kind)
	assert.Less(t, took, 3900*time.Millisecond, "the two 2 s checks ran in parallel (one after the other: 4 s or more)")
	assert.Contains(t, d.Reason, "verification gate: 1 task(s) completed in this session no longer pass")
	assert.Contains(t, d.Reason, "task-002: Title of task-002: `sleep 2; test -f two.ok` FAIL (exit 1")
	assert.Contains(t, d.Reason, "reopened: failed [TEST_FAIL] regression detected at session end (attempts 2/3)")
	assert.NotContains(t, d.Reason, "task-001:")
	assert.NoFileExists(t, filepath.Join(dir, "three.ran"), "tasks of earlier sessions are not re-run")
	data, _ := os.ReadFile(filepath.Join(dir, "harness-tasks.json"))
	assert.Contains(t, string(data), `"[TEST_FAIL] regression detected at session end"`)
	assert.Contains(t, strings.Join(logLines(t, dir), "\n"), "[SESSION-1] ERROR [task-002] [TEST_FAIL] regression detected at session end")

	// The reopened task is ordinary work now.
	d = stop(t, true)
	require.Equal(t, hook.Block, d.Kind)
	assert.Contains(t, d.Reason, "run `harness claim task-002`")
}

func TestReflectionRounds(t *testing.T) {
	dir := testProject(t, tasksJSON(1, "", task("task-001", "completed")))
	transcript := filepath.Join(dir, "t.jsonl")
	require.NoError(t, os.WriteFile(transcript, []byte(`{"type":"user","message":{"role":"user","content":"Write a CSV parser"}}`+"\n"), 0o644))
	t.Setenv("HARNESS_REFLECT_ITERATIONS", "2")
	d := stop(t, false, "transcript_path", transcript)
	require.Equal(t, hook.Block, d.Kind)
	assert.True(t, strings.HasPrefix(d.Reason, "Self-reflect 1/2: "), d.Reason)
	assert.Contains(t, d.Reason, "Original request:\n> Write a CSV parser\n")
	assert.NoFileExists(t, filepath.Join(dir, root.ActiveMarker))

	d = stop(t, true, "last_assistant_message", "Checked. REFLECT-DONE is what I will say later.")
	require.Equal(t, hook.Block, d.Kind, "REFLECT-DONE counts only on a line of its own")
	assert.True(t, strings.HasPrefix(d.Reason, "Self-reflect 2/2: "))
	assert.Contains(t, d.Reason, "Your closing message so far:\n> Checked.", "no transcript: the last message is restated")
	assert.Equal(t, hook.Decision{}, stop(t, true))
	assert.Equal(t, hook.Decision{}, stop(t, false), "reflection happens once per finished run")

	// Another session of the finished project: nothing.
	t.Setenv("CLAUDE_CODE_SESSION_ID", "someone-else")
	assert.Equal(t, hook.Decision{}, Stop(hook.Parse([]byte(`{"session_id":"someone-else","hook_event_name":"Stop"}`))))
}

func TestSaidDone(t *testing.T) {
	for msg, want := range map[string]bool{
		"REFLECT-DONE":                  true,
		"All good.\n\nREFLECT-DONE\n":   true,
		"All good.\n**REFLECT-DONE**":   true,
		"I will say REFLECT-DONE later": false,
		"REFLECT-DONE-ISH":              false,
		"":                              false,
	} {
		assert.Equal(t, want, saidDone(msg), "%q", msg)
	}
}

func TestOriginalRequest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	tests := []struct {
		name, transcript, want string
	}{
		{"string content", `{"type":"user","message":{"role":"user","content":"Fix the bug"}}`, "Fix the bug"},
		{"text blocks", `{"type":"user","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}`, "a\nb"},
		{"meta and tool results are skipped", `{"type":"user","isMeta":true,"message":{"content":"meta"}}
{"type":"user","message":{"content":[{"type":"tool_result","content":"out"}]}}
{"type":"assistant","message":{"content":"hi"}}
{"type":"user","message":{"content":"the request"}}`, "the request"},
		{"slash command", `{"type":"user","message":{"content":"<command-message>harness is running…</command-message>\n<command-name>/harness</command-name>\n<command-args>run</command-args>"}}`, "/harness run"},
		{"junk lines", "not json\n\x00\xff\n[1,2]\n" + `{"type":"user","message":{"content":"after junk"}}`, "after junk"},
		{"no user message", `{"type":"assistant","message":{"content":"hi"}}`, ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, originalRequest(write(strings.ReplaceAll(tt.name, " ", "_"), tt.transcript)))
		})
	}
	assert.Equal(t, "", originalRequest(""))
	assert.Equal(t, "", originalRequest(filepath.Join(dir, "missing")))
	assert.Equal(t, "", originalRequest(dir), "a directory")
	assert.Equal(t, "", originalRequest("/dev/zero"), "a device is never read")
}

func TestVerificationGateBudget(t *testing.T) {
	// A check the gate's budget cuts short is unverified, not a regression:
	// the stop is not blocked and the task stays completed.
	dir := testProject(t, tasksJSON(1, "", task("task-001", "completed", `"validation": {"command": "sleep 20", "timeout_seconds": 60}`)))
	t.Setenv("HARNESS_VERIFY_BUDGET", "1")
	t.Setenv("HARNESS_REFLECT_ITERATIONS", "0")
	require.NoError(t, (&Runtime{SessionID: sessionID, Session: 1, LogOffset: 0}).save(record.Of(dir)))
	appendLog(t, dir, "[2025-07-01T11:00:01Z] [SESSION-1] Completed [task-001] (commit a)")
	start := time.Now()
	d := stop(t, false)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.NotEqual(t, hook.Block, d.Kind)
	log := strings.Join(logLines(t, dir), "\n")
	assert.Contains(t, log, "WARN verification gate: `sleep 20` (task-001) did not finish within HARNESS_VERIFY_BUDGET=1s; left unverified")
	data, _ := os.ReadFile(filepath.Join(dir, "harness-tasks.json"))
	assert.Contains(t, string(data), `"status": "completed"`)
}

func TestEnding(t *testing.T) {
	tests := []struct {
		tasks []string
		want  string
	}{
		{[]string{task("task-001", "completed"), task("task-002", "completed")}, "every harness task is done"},
		{[]string{task("task-001", "completed"), task("task-002", "failed", `"attempts": 3`, `"max_attempts": 3`)},
			"the harness run is over but NOT all done (1 of 2 completed, 1 failed for good)"},
		{[]string{task("task-001", "failed", `"attempts": 3`, `"max_attempts": 3`), task("task-002", "pending", `"depends_on": ["task-001"]`)},
			"the harness run is over but NOT all done (0 of 2 completed, 1 failed for good, 1 never ran, blocked by a failed dependency)"},
	}
	for _, tt := range tests {
		dir := testProject(t, tasksJSON(1, "", tt.tasks...))
		s, err := state.Load(dir)
		require.NoError(t, err)
		assert.Equal(t, tt.want, ending(s))
	}
}

// A next task without a validation command is one a claim refuses: the
// start and the turn end say to give it one first, where they said to
// claim it (and the claim failed).
func TestNextTaskWithoutCheck(t *testing.T) {
	testProject(t, tasksJSON(0, "",
		task("task-001", "pending", `"validation": {"command": null}`),
		task("task-002", "pending")))
	want := "give task-001: Title of task-001 a validation command first, `harness edit task-001 --validate \"COMMAND\"`"
	d := SessionStart(payload(t, hook.SessionStart, "source", "startup"))
	assert.Contains(t, d.Context, want)
	assert.NotContains(t, d.Context, "do now: run `harness claim task-001`")
	d = stop(t, false)
	require.Equal(t, hook.Block, d.Kind)
	assert.Contains(t, d.Reason, want)
	assert.Contains(t, d.Reason, "then run `harness claim task-001`")
	d = TeammateIdle(payload(t, hook.TeammateIdle, "teammate_name", "bob", "team_name", "core"))
	require.Equal(t, hook.Refuse, d.Kind)
	assert.Contains(t, d.Reason, want)
}
