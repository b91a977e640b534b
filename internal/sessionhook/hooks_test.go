package sessionhook

import (
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
	"github.com/harness-agent/harness/internal/state"
)

func TestSessionStartSources(t *testing.T) {
	tests := []struct {
		source string
		count  int // session_count after
		label  string
	}{
		{"startup", 6, "startup"},
		{"resume", 6, "resume"},
		{"clear", 6, "clear"},
		{"fork", 6, "fork"},
		{"compact", 5, "compact"},
		{"", 6, "startup"},
		{"something-new", 6, "startup"},
	}
	for _, tt := range tests {
		t.Run(tt.label+"/"+tt.source, func(t *testing.T) {
			dir := testProject(t, tasksJSON(5, "", task("task-001", "pending")))
			d := SessionStart(payload(t, hook.SessionStart, "source", tt.source))
			require.Equal(t, hook.Allow, d.Kind)
			s, err := state.Load(dir)
			require.NoError(t, err)
			assert.Equal(t, tt.count, s.SessionCount)
			assert.True(t, strings.HasPrefix(d.Context, "HARNESS SESSION-"+itoa(tt.count)+" ("+tt.label+"; exclusive)"), d.Context)
			assert.Contains(t, d.Context, "tasks: pending=1 in_progress=0 completed=0 failed=0 blocked=0 total=1")
			assert.Contains(t, d.Context, "next=task-001: Title of task-001")
			assert.Contains(t, d.Context, "cycle: 1) harness claim")
			assert.LessOrEqual(t, len(d.Context), 3000, "short and dense")
			rt := ReadRuntime(record.Of(dir), sessionID)
			require.NotNil(t, rt)
			assert.Equal(t, tt.count, rt.Session)
			if tt.source == "compact" {
				// No runtime before it: no known beginning (TestCompactWithoutRuntime).
				assert.Equal(t, int64(-1), rt.LogOffset)
			} else {
				assert.Equal(t, logSize(dir), rt.LogOffset)
			}
		})
	}
}

func TestSessionStartContextStaysSmall(t *testing.T) {
	// A thousand tasks and a long log: the context is the same few lines.
	var tasks []string
	for i := 0; i < 1000; i++ {
		tasks = append(tasks, `{"id": "task-`+itoa(i)+`", "title": "`+strings.Repeat("long title ", 50)+`", "status": "pending"}`)
	}
	dir := testProject(t, tasksJSON(0, "", tasks...))
	for i := 0; i < 500; i++ {
		appendLog(t, dir, "[2025-07-01T11:00:01Z] [SESSION-0] CHECKPOINT [task-1] step=1/2 \""+strings.Repeat("word ", 100)+"\"")
	}
	d := SessionStart(payload(t, hook.SessionStart, "source", "startup"))
	assert.LessOrEqual(t, len(d.Context), 3000)
	assert.LessOrEqual(t, strings.Count(d.Context, "\n"), 25)
}

func TestSessionStartWithoutTasks(t *testing.T) {
	dir := testProject(t, `{"version": 2, "tasks": [], "session_count": 0, "last_session": null}`)
	d := SessionStart(payload(t, hook.SessionStart, "source", "startup"))
	assert.Contains(t, d.Context, "next=none (no tasks yet)")
	assert.Contains(t, d.Context, "no tasks yet: add them with `harness add \"TITLE\" --validate \"COMMAND\"`")
	d = stop(t, false)
	assert.Equal(t, hook.Allow, d.Kind, "nothing to do yet: the session may stop, the harness stays on")
	assert.FileExists(t, filepath.Join(dir, ".harness-active"))
}

func TestSessionStartLockError(t *testing.T) {
	testProject(t, tasksJSON(0, "", task("task-001", "pending")))
	// A lock directory that cannot be made: under a regular file.
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	t.Setenv("HARNESS_LOCK_DIR", filepath.Join(file, "locks"))
	d := SessionStart(payload(t, hook.SessionStart, "source", "startup"))
	assert.Equal(t, hook.Allow, d.Kind)
	assert.True(t, strings.HasPrefix(d.Context, "ERROR [ENV_SETUP] cannot take the harness session lock"), d.Context)
	assert.Contains(t, d.Context, "do no harness work")

	// Told to do no harness work, the session is not then ordered to
	// claim the next task at its turn end, nor handed a resume card.
	assert.Equal(t, hook.Decision{}, stop(t, false))
	assert.Equal(t, hook.Decision{}, PreCompact(payload(t, hook.PreCompact, "trigger", "auto")))
	// A compaction tells it again; a new session tries again.
	d = SessionStart(payload(t, hook.SessionStart, "source", "compact"))
	assert.Contains(t, d.Context, "ERROR: this session's start found that the harness cannot run here (cannot take the harness session lock ")
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	d = SessionStart(payload(t, hook.SessionStart, "source", "startup"))
	assert.Contains(t, d.Context, "next=task-001")
	assert.Equal(t, hook.Block, stop(t, false).Kind)
}

func TestSubagentStopOwnership(t *testing.T) {
	future := `"lease_expires_at": "2999-01-01T00:00:00Z"`
	tests := []struct {
		name         string
		worker       string
		state        string
		agent, mate  string
		hookActive   bool
		block        bool
		reasonPrefix string
	}{
		{"exclusive: any in progress", "", tasksJSON(1, "", task("task-001", "in_progress")), "a1", "", false, true, "HARNESS: task-001: Title of task-001 is still in progress."},
		{"exclusive: stop_hook_active", "", tasksJSON(1, "", task("task-001", "in_progress")), "a1", "", true, false, ""},
		{"exclusive: nothing in progress", "", tasksJSON(1, "", task("task-001", "pending")), "a1", "", false, false, ""},
		{"concurrent: claimed by agent_id", "", tasksJSON(1, concurrent, task("task-001", "in_progress", `"claimed_by": "a1"`, future)), "a1", "", false, true, "HARNESS: task-001"},
		{"concurrent: claimed by teammate_name", "", tasksJSON(1, concurrent, task("task-001", "in_progress", `"claimed_by": "bob"`, future)), "", "bob", false, true, "HARNESS: task-001"},
		{"concurrent: claimed by HARNESS_WORKER_ID", "w1", tasksJSON(1, concurrent, task("task-001", "in_progress", `"claimed_by": "w1"`, future)), "a9", "", false, true, "HARNESS: task-001"},
		{"concurrent: someone else's", "w1", tasksJSON(1, concurrent, task("task-001", "in_progress", `"claimed_by": "w2"`, future)), "a1", "", false, false, ""},
		{"concurrent: no identity", "", tasksJSON(1, concurrent, task("task-001", "in_progress", `"claimed_by": "w2"`, future)), "", "", false, true, "HARNESS: concurrent mode with work in progress, and this subagent has no worker identity"},
		{"concurrent: no identity, nothing in progress", "", tasksJSON(1, concurrent, task("task-001", "pending")), "", "", false, false, ""},
		{"corrupt state: the main Stop reports it", "", `{"tasks":`, "a1", "", false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testProject(t, tt.state)
			t.Setenv("HARNESS_WORKER_ID", tt.worker)
			kv := []any{"stop_hook_active", tt.hookActive, "agent_type", "general-purpose"}
			if tt.agent != "" {
				kv = append(kv, "agent_id", tt.agent)
			}
			if tt.mate != "" {
				kv = append(kv, "teammate_name", tt.mate)
			}
			d := SubagentStop(payload(t, hook.SubagentStop, kv...))
			if !tt.block {
				assert.Equal(t, hook.Decision{}, d)
				return
			}
			assert.Equal(t, hook.Block, d.Kind)
			assert.True(t, strings.HasPrefix(d.Reason, tt.reasonPrefix), d.Reason)
		})
	}
}

func TestTeammateIdle(t *testing.T) {
	future := `"lease_expires_at": "2999-01-01T00:00:00Z"`
	tests := []struct {
		name   string
		state  string
		refuse string // the reason, "" when the teammate may idle
	}{
		{"owns work", tasksJSON(1, concurrent, task("task-002", "in_progress", `"claimed_by": "bob"`, future), task("task-001", "pending")),
			"HARNESS: task-002: Title of task-002 is in progress and yours: finish it, then run `harness validate task-002`."},
		{"eligible work", tasksJSON(1, "", task("task-001", "pending")),
			"HARNESS: eligible work remains: run `harness claim task-001` to start task-001: Title of task-001."},
		{"another's work only", tasksJSON(1, concurrent, task("task-001", "in_progress", `"claimed_by": "alice"`, future)), ""},
		{"all done", tasksJSON(1, "", task("task-001", "completed")), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testProject(t, tt.state)
			d := TeammateIdle(payload(t, hook.TeammateIdle, "teammate_name", "bob", "team_name", "core"))
			if tt.refuse == "" {
				assert.Equal(t, hook.Decision{}, d)
				return
			}
			assert.Equal(t, hook.Decision{Kind: hook.Refuse, Reason: tt.refuse}, d)
		})
	}
}

func TestSessionEndWithinBudget(t *testing.T) {
	dir := testProject(t, tasksJSON(0, "", task("task-001", "pending")))
	SessionStart(payload(t, hook.SessionStart, "source", "startup"))
	appendLog(t, dir, "[2025-07-01T11:00:01Z] [SESSION-1] CHECKPOINT [task-001] step=1/2 \"x\"")

	// Another process holds the transaction lock for longer than the budget.
	unlock, err := lock.Tx(dir)
	require.NoError(t, err)
	defer unlock()
	start := time.Now()
	d := SessionEnd(payload(t, hook.SessionEnd, "reason", "prompt_input_exit"))
	took := time.Since(start)
	assert.Equal(t, hook.Decision{}, d)
	// Its three waits on the lock come to 0.9 s: the bound is Claude
	// Code's 1.5 s for all SessionEnd hooks, with a margin, not a speed
	// target (a loaded machine ran it in 1.0 s).
	assert.Less(t, took, 1400*time.Millisecond, "inside Claude Code's 1.5 s")
	log := strings.Join(logLines(t, dir), "\n")
	assert.Contains(t, log, "[SESSION-1] STATS tasks_total=1", "STATS even when last_session cannot be written")
	assert.Contains(t, log, "[SESSION-1] LOCK released")
	_, _, held := lock.Owner(dir)
	assert.False(t, held)
	assert.NoFileExists(t, RuntimePath(record.Of(dir), sessionID))
}

func TestSessionEndInactiveStillReleasesItsLock(t *testing.T) {
	dir := testProject(t, tasksJSON(0, "", task("task-001", "pending")))
	SessionStart(payload(t, hook.SessionStart, "source", "startup"))
	require.NoError(t, os.Remove(filepath.Join(dir, ".harness-active")))
	before := logLines(t, dir)
	assert.Equal(t, hook.Decision{}, SessionEnd(payload(t, hook.SessionEnd)))
	_, _, held := lock.Owner(dir)
	assert.False(t, held)
	assert.Equal(t, before, logLines(t, dir), "an inactive harness's log is left alone")
}

// TestCompactWithoutRuntime: a session whose start found no harness (set up
// while it ran) and that is compacted before its first turn end has no
// known beginning: what it did before the compaction is still its own at
// the next turn end (the compaction's start took the log's end as its
// beginning, and lost it).
func TestCompactWithoutRuntime(t *testing.T) {
	dir := testProject(t, tasksJSON(0, "", task("task-001", "completed"), task("task-002", "pending")))
	appendLog(t, dir, "[2025-07-01T11:00:01Z] [SESSION-0] Completed [task-001] (commit a)")
	require.Nil(t, ReadRuntime(record.Of(dir), sessionID))
	SessionStart(payload(t, hook.SessionStart, "source", "compact"))
	rt := ReadRuntime(record.Of(dir), sessionID)
	require.NotNil(t, rt)
	assert.Equal(t, int64(-1), rt.LogOffset, "no known beginning")
	assert.Equal(t, []string{"task-001"}, readSessionLog(dir, rt, owner{n: rt.Session}).completed)
}

func TestCompactKeepsTheSessionsStory(t *testing.T) {
	dir := testProject(t, tasksJSON(0, "", task("task-001", "completed"), task("task-002", "pending")))
	SessionStart(payload(t, hook.SessionStart, "source", "startup"))
	appendLog(t, dir, "[2025-07-01T11:00:01Z] [SESSION-1] Completed [task-001] (commit a)")
	before := ReadRuntime(record.Of(dir), sessionID)
	d := SessionStart(payload(t, hook.SessionStart, "source", "compact"))
	assert.Contains(t, d.Context, "HARNESS SESSION-1 (compact; exclusive)")
	rt := ReadRuntime(record.Of(dir), sessionID)
	require.NotNil(t, rt)
	assert.Equal(t, before.LogOffset, rt.LogOffset, "the session's part of the log still starts where it began")
	assert.Equal(t, []string{"task-001"}, readSessionLog(dir, rt, owner{n: 1}).completed)
}
