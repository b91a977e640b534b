package state

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doc is a tasks file holding tasks (JSON objects, comma-separated).
func doc(config, tasks string, sessions int) []byte {
	if config == "" {
		config = `{"concurrency_mode":"exclusive","max_sessions":50}`
	}
	return []byte(`{"version":2,"created":"2026-11-26T00:00:00Z","session_config":` + config +
		`,"tasks":[` + tasks + `],"session_count":` + itoa(sessions) + `,"last_session":null}`)
}

func itoa(n int) string { return strconv.Itoa(n) }

const (
	pendingT  = `{"id":"task-001","title":"A","status":"pending","priority":"P1","depends_on":[],"attempts":0,"max_attempts":3,"started_at_commit":null,"validation":{"command":"true","timeout_seconds":60},"on_failure":{"cleanup":null},"error_log":[],"checkpoints":[],"completed_at":null}`
	claimedT  = `{"id":"task-001","title":"A","status":"in_progress","priority":"P1","depends_on":[],"attempts":0,"max_attempts":3,"started_at_commit":"abc","validation":{"command":"true","timeout_seconds":60},"on_failure":{"cleanup":null},"error_log":[],"checkpoints":[],"completed_at":null,"claimed_by":"w","lease_expires_at":"2026-11-26T01:00:00Z"}`
	stepT     = `{"id":"task-001","title":"A","status":"in_progress","priority":"P1","depends_on":[],"attempts":0,"max_attempts":3,"started_at_commit":"abc","validation":{"command":"true","timeout_seconds":60},"on_failure":{"cleanup":null},"error_log":[],"checkpoints":[{"step":1,"total":2,"description":"x","timestamp":"t"}],"completed_at":null,"claimed_by":"w","lease_expires_at":"2026-11-26T01:00:00Z"}`
	doneT     = `{"id":"task-001","title":"A","status":"completed","priority":"P1","depends_on":[],"attempts":0,"max_attempts":3,"started_at_commit":"abc","validation":{"command":"true","timeout_seconds":60},"on_failure":{"cleanup":null},"error_log":[],"checkpoints":[],"completed_at":"2026-11-26T00:30:00Z"}`
	failedT   = `{"id":"task-001","title":"A","status":"failed","priority":"P1","depends_on":[],"attempts":1,"max_attempts":3,"started_at_commit":"abc","validation":{"command":"true","timeout_seconds":60},"on_failure":{"cleanup":null},"error_log":["[TEST] no"],"checkpoints":[],"completed_at":null}`
	deadT     = `{"id":"task-001","title":"A","status":"failed","priority":"P1","depends_on":[],"attempts":3,"max_attempts":3,"started_at_commit":"abc","validation":{"command":"true","timeout_seconds":60},"on_failure":{"cleanup":null},"error_log":["[TEST] no"],"checkpoints":[],"completed_at":null}`
	second    = `{"id":"task-002","title":"B","status":"pending","priority":"P1","depends_on":[],"attempts":0,"max_attempts":3,"started_at_commit":null,"validation":{"command":"true","timeout_seconds":60},"on_failure":{"cleanup":null},"error_log":[],"checkpoints":[],"completed_at":null}`
	secondRun = `{"id":"task-002","title":"B","status":"in_progress","priority":"P1","depends_on":[],"attempts":0,"max_attempts":3,"started_at_commit":"abc","validation":{"command":"true","timeout_seconds":60},"on_failure":{"cleanup":null},"error_log":[],"checkpoints":[],"completed_at":null,"claimed_by":"w"}`
)

func TestJudgeTransition(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		broken              string // a part of Broken; "" for a legal change
		completed, added    []string
	}{
		{name: "claim", before: pendingT, after: claimedT},
		{name: "checkpoint", before: claimedT, after: stepT},
		{name: "validate passes", before: claimedT, after: doneT, completed: []string{"task-001"}},
		{name: "claim and validate in one command", before: pendingT, after: doneT, completed: []string{"task-001"}},
		{name: "a failed attempt", before: claimedT, after: failedT},
		{name: "a retry's claim", before: failedT, after: strings.Replace(strings.Replace(failedT, `"failed"`, `"in_progress"`, 1), `"completed_at":null`, `"completed_at":null,"claimed_by":"w"`, 1)},
		{name: "a retry's claim that drops the errors", before: failedT, after: strings.Replace(claimedT, `"attempts":0`, `"attempts":1`, 1), broken: "error_log of task-001 may only grow"},
		{name: "a task added", before: pendingT, after: pendingT + "," + second, added: []string{"task-002"}},
		{name: "the title and priority edited", before: pendingT, after: strings.Replace(strings.Replace(pendingT, `"A"`, `"A2"`, 1), `"P1"`, `"P0"`, 1)},
		{name: "a completed task reopened", before: doneT, after: failedT, broken: "only the verification gate reopens it"},
		{name: "a completed task's date moved", before: doneT, after: strings.Replace(doneT, "00:30", "00:31", 1), broken: "only the verification gate"},
		{name: "a task failed for good reopened", before: deadT, after: strings.Replace(deadT, `"failed"`, `"pending"`, 1), broken: "failed for good"},
		{name: "attempts reset", before: failedT, after: strings.Replace(failedT, `"attempts":1`, `"attempts":0`, 1), broken: "attempts of task-001 may not go down"},
		{name: "the validation changed", before: pendingT, after: strings.Replace(pendingT, `"command":"true"`, `"command":"echo ok"`, 1), broken: "the validation of task-001 may not change"},
		{name: "a validation where there was none", before: strings.Replace(pendingT, `"command":"true"`, `"command":""`, 1), after: pendingT},
		{name: "completed without a validation", before: strings.Replace(claimedT, `"command":"true"`, `"command":""`, 1), after: strings.Replace(doneT, `"command":"true"`, `"command":""`, 1), broken: "no validation command"},
		{name: "failed without an error", before: claimedT, after: strings.Replace(failedT, `["[TEST] no"]`, `[]`, 1), broken: "without an error_log entry"},
		{name: "a task removed", before: pendingT + "," + second, after: pendingT, broken: "task task-002 was removed"},
		{name: "a task added completed", before: pendingT, after: pendingT + "," + strings.Replace(strings.Replace(doneT, "task-001", "task-002", 1), `"A"`, `"B"`, 1), broken: "added with work already recorded"},
		{name: "max_attempts raised", before: failedT, after: strings.Replace(failedT, `"max_attempts":3`, `"max_attempts":9`, 1), broken: "max_attempts"},
		{name: "the dependencies changed", before: pendingT + "," + second, after: pendingT + "," + strings.Replace(second, `"depends_on":[]`, `"depends_on":["task-001"]`, 1), broken: "depends_on of task-002"},
		{name: "a checkpoint rewritten", before: stepT, after: strings.Replace(stepT, `"x"`, `"y"`, 1), broken: "checkpoints of task-001 may only grow"},
		{name: "a pending task's claim forged", before: pendingT + "," + second, after: pendingT + "," + strings.Replace(second, `"depends_on":[]`, `"depends_on":[],"claimed_by":"x"`, 1), broken: "the claim of task-002"},
		{name: "a second task claimed", before: pendingT + "," + second, after: pendingT + "," + secondRun},
		{name: "acceptance criteria rewritten", before: strings.Replace(pendingT, `"completed_at":null`, `"completed_at":null,"acceptance":["the page loads"]`, 1),
			after: strings.Replace(pendingT, `"completed_at":null`, `"completed_at":null,"acceptance":["anything"]`, 1), broken: "the acceptance criteria of task-001"},
		{name: "acceptance criteria dropped", before: strings.Replace(pendingT, `"completed_at":null`, `"completed_at":null,"acceptance":["the page loads"]`, 1), after: pendingT, broken: "the acceptance criteria of task-001"},
		{name: "a source rewritten", before: strings.Replace(pendingT, `"completed_at":null`, `"completed_at":null,"source":"beads:bd-1"`, 1),
			after: strings.Replace(pendingT, `"completed_at":null`, `"completed_at":null,"source":"beads:bd-2"`, 1), broken: "the source and description of task-001"},
		{name: "a task added with acceptance criteria", before: pendingT, after: pendingT + "," + strings.Replace(second, `"completed_at":null`, `"completed_at":null,"source":"github:#3","acceptance":["x"]`, 1), added: []string{"task-002"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Parse(doc("", tc.before, 1), "before.json")
			require.NoError(t, err)
			a, err := Parse(doc("", tc.after, 1), "after.json")
			require.NoError(t, err)
			got := JudgeTransition(b, a)
			if tc.broken == "" {
				assert.Empty(t, got.Broken)
			} else {
				assert.Contains(t, got.Broken, tc.broken)
			}
			if tc.broken == "" {
				assert.Equal(t, tc.completed, got.Completed)
				assert.Equal(t, tc.added, got.Added)
			}
		})
	}
}

func TestJudgeTransitionTopLevel(t *testing.T) {
	b, err := Parse(doc("", pendingT, 3), "b")
	require.NoError(t, err)
	down, err := Parse(doc("", pendingT, 2), "a")
	require.NoError(t, err)
	assert.Contains(t, JudgeTransition(b, down).Broken, "session_count may not go down")
	up, err := Parse(doc("", pendingT, 4), "a")
	require.NoError(t, err)
	assert.Empty(t, JudgeTransition(b, up).Broken)
	spaced, err := Parse(doc(`{ "concurrency_mode": "exclusive", "max_sessions": 50 }`, pendingT, 3), "a")
	require.NoError(t, err)
	assert.Empty(t, JudgeTransition(b, spaced).Broken)
	policy, err := Parse(doc(`{"concurrency_mode":"exclusive","max_sessions":500}`, pendingT, 3), "a")
	require.NoError(t, err)
	assert.Contains(t, JudgeTransition(b, policy).Broken, "session_config")
}

// FuzzJudgeTransition: the judge never panics on two states the parser
// accepts, an unchanged state is always legal with nothing completed or
// added, and a verdict names a rule or lists what the change did, never
// both.
func FuzzJudgeTransition(f *testing.F) {
	f.Add(doc("", pendingT, 1), doc("", claimedT, 1))
	f.Add(doc("", claimedT, 1), doc("", doneT, 2))
	f.Add(doc("", doneT, 1), doc("", failedT, 1))
	f.Add(doc("", pendingT+","+second, 1), doc("", pendingT, 1))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		b, err := Parse(x, "before.json")
		if err != nil {
			return
		}
		same := JudgeTransition(b, b)
		if same.Broken != "" || len(same.Completed) > 0 || len(same.Added) > 0 {
			t.Fatalf("an unchanged state judged %+v", same)
		}
		a, err := Parse(y, "after.json")
		if err != nil {
			return
		}
		got := JudgeTransition(b, a)
		if got.Broken != "" && (len(got.Completed) > 0 || len(got.Added) > 0) {
			// A broken rule stops the judgement: what it found before is
			// not a verdict.
			return
		}
	})
}

// A hand edit of the tasks file may not touch what an import or a person
// gave a task: its acceptance criteria, description and source.
func TestHandEditBreaksPlanFields(t *testing.T) {
	base := Task{ID: "task-001", Title: "A", Status: Pending, Source: "beads:bd-1", Description: "d", Acceptance: []string{"x"}}
	for _, tc := range []struct {
		name string
		edit func(*Task)
		want string
	}{
		{"acceptance rewritten", func(t *Task) { t.Acceptance = []string{"y"} }, "the acceptance criteria of task-001"},
		{"acceptance dropped", func(t *Task) { t.Acceptance = nil }, "the acceptance criteria of task-001"},
		{"description rewritten", func(t *Task) { t.Description = "e" }, "the description of task-001"},
		{"source rewritten", func(t *Task) { t.Source = "beads:bd-2" }, "the source of task-001"},
		{"nothing", func(*Task) {}, ""},
	} {
		after := base.clone()
		tc.edit(&after)
		got := HandEditBreaks(&base, &after)
		if tc.want == "" {
			assert.Empty(t, got, tc.name)
		} else {
			assert.Contains(t, got, tc.want, tc.name)
		}
	}
}
