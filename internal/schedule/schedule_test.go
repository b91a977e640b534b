package schedule

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/state"
)

// tk builds a task: id, status, priority, dependencies.
func tk(id, status, prio string, deps ...string) state.Task {
	return state.Task{ID: id, Title: "title " + id, Status: status, Priority: prio, DependsOn: deps, MaxAttempts: 3}
}

func ids(ts []*state.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func TestValidate(t *testing.T) {
	exhausted := tk("x", state.Failed, "P1")
	exhausted.Attempts = 3
	depFailed := tk("y", state.Failed, "P1")
	depFailed.Attempts = 1
	depFailed.ErrorLog = []string{"[DEPENDENCY] Blocked by failed z"}
	retryable := tk("r", state.Failed, "P1")
	retryable.Attempts = 1

	tests := []struct {
		name  string
		tasks []state.Task
		want  []string // "id: message"
	}{
		{"self reference", []state.Task{tk("a", state.Pending, "P0", "a")},
			[]string{"a: Circular dependency detected: a -> a"}},
		{"two-cycle", []state.Task{tk("a", state.Pending, "P0", "b"), tk("b", state.Pending, "P0", "a")},
			[]string{"a: Circular dependency detected: a -> b -> a", "b: Circular dependency detected: b -> a -> b"}},
		{"three-cycle with a tail", []state.Task{
			tk("a", state.Pending, "P0", "b"), tk("b", state.Pending, "P0", "c"), tk("c", state.Pending, "P0", "a"),
			tk("d", state.Pending, "P0", "a")},
			[]string{"a: Circular dependency detected: a -> b -> c -> a", "b: Circular dependency detected: b -> c -> a -> b",
				"c: Circular dependency detected: c -> a -> b -> c", "d: Blocked by failed a"}},
		{"completed tasks break cycles", []state.Task{tk("a", state.Completed, "P0", "b"), tk("b", state.Pending, "P0", "a")}, nil},
		{"blocked by exhausted", []state.Task{exhausted, tk("a", state.Pending, "P0", "x")}, []string{"a: Blocked by failed x"}},
		{"blocked by dependency failure", []state.Task{depFailed, tk("a", state.Pending, "P0", "y")}, []string{"a: Blocked by failed y"}},
		{"not blocked by retryable", []state.Task{retryable, tk("a", state.Pending, "P0", "r")}, nil},
		{"propagates to a fixpoint", []state.Task{
			tk("c", state.Pending, "P0", "b"), tk("b", state.Pending, "P0", "a"), exhausted, tk("a", state.Pending, "P0", "x")},
			[]string{"b: Blocked by failed a", "a: Blocked by failed x", "c: Blocked by failed b"}},
		{"unknown dependency", []state.Task{tk("a", state.Pending, "P0", "ghost")}, []string{"a: Unknown dependency ghost"}},
		{"already marked tasks stay as they are", []state.Task{depFailed}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, m := range Validate(tt.tasks) {
				got = append(got, m.ID+": "+m.Message)
			}
			assert.ElementsMatch(t, tt.want, got)
		})
	}
}

func TestApplyMakesValidationIdempotent(t *testing.T) {
	s := &state.State{Tasks: []state.Task{tk("a", state.Pending, "P0", "b"), tk("b", state.Pending, "P0", "a"), tk("c", state.Pending, "P1", "a")}}
	marks := Validate(s.Tasks)
	require.Len(t, marks, 3)
	Apply(s, marks, fixed)
	for _, task := range s.Tasks {
		assert.Equal(t, state.Failed, task.Status)
		assert.True(t, task.PermanentlyFailed())
	}
	assert.Empty(t, Validate(s.Tasks), "a second run marks nothing")
}

func TestCandidatesOrder(t *testing.T) {
	f1 := tk("task-001", state.Failed, "P0")
	f1.Attempts, f1.FailedAt = 1, "2025-07-01T10:00:00Z"
	f2 := tk("task-002", state.Failed, "P0")
	f2.Attempts, f2.FailedAt = 1, "2025-06-01T10:00:00Z"
	f3 := tk("task-003", state.Failed, "P2")
	f3.Attempts = 1
	tasks := []state.Task{
		tk("task-10", state.Pending, "P1"),
		tk("task-9", state.Pending, "P1"),
		tk("task-5", state.Pending, "P0", "task-20"),
		tk("task-20", state.InProgress, "P0"),
		tk("task-7", state.Pending, "P2"),
		tk("task-8", state.Pending, "weird"),
		tk("task-1", state.Pending, "P0"),
		f1, f2, f3,
		tk("task-4", state.Completed, "P0"),
	}
	assert.Equal(t, []string{"task-1", "task-9", "task-10", "task-7", "task-8", "task-002", "task-001", "task-003"}, ids(Candidates(tasks)))
}

func TestExplain(t *testing.T) {
	exhausted := tk("x", state.Failed, "P1")
	exhausted.Attempts = 3
	tests := []struct {
		name  string
		tasks []state.Task
		want  Why
	}{
		{"empty", nil, Empty},
		{"all done", []state.Task{tk("a", state.Completed, "P0")}, AllDone},
		{"exhausted", []state.Task{tk("a", state.Completed, "P0"), exhausted}, Blocked},
		{"waiting", []state.Task{tk("a", state.InProgress, "P0"), tk("b", state.Pending, "P0", "a")}, Waiting},
		{"blocked pending", []state.Task{exhausted, tk("b", state.Pending, "P0", "x")}, Blocked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Empty(t, Candidates(tt.tasks))
			assert.Equal(t, tt.want, Explain(tt.tasks))
		})
	}
}

func TestCount(t *testing.T) {
	exhausted := tk("x", state.Failed, "P1")
	exhausted.Attempts = 3
	done := tk("d", state.Completed, "P0")
	done.Attempts = 1
	done.Checkpoints = []state.Checkpoint{{Step: 1, Total: 1}}
	tasks := []state.Task{done, exhausted, tk("b", state.Pending, "P0", "x"), tk("c", state.Pending, "P0"), tk("i", state.InProgress, "P0")}
	st := Count(tasks)
	assert.Equal(t, "tasks_total=5 completed=1 failed=1 pending=2 blocked=1 attempts_total=4 checkpoints=1", st.Line())
	// The status counts count each task once: b, blocked, is not pending.
	assert.Equal(t, "pending=1 in_progress=1 completed=1 failed=1 blocked=1 total=5", st.Counts())

	// Dependency validation fails b with [DEPENDENCY]: the protocol's line
	// counts it failed, the status counts still blocked.
	tasks[2].Status = state.Failed
	tasks[2].ErrorLog = []string{"[DEPENDENCY] Blocked by failed task x"}
	st = Count(tasks)
	assert.Equal(t, "tasks_total=5 completed=1 failed=2 pending=1 blocked=0 attempts_total=4 checkpoints=1", st.Line())
	assert.Equal(t, "pending=1 in_progress=1 completed=1 failed=1 blocked=1 total=5", st.Counts())
}

func TestIDLess(t *testing.T) {
	assert.True(t, IDLess("task-9", "task-10"))
	assert.True(t, IDLess("task-009", "task-010"))
	assert.False(t, IDLess("task-10", "task-9"))
	assert.True(t, IDLess("a", "b"))
	assert.True(t, IDLess("task", "task-1"))
	assert.False(t, IDLess("x", "x"))
}

func chain(n int) []state.Task {
	tasks := make([]state.Task, n)
	for i := range tasks {
		tasks[i] = tk(fmt.Sprintf("task-%05d", i), state.Pending, fmt.Sprintf("P%d", i%3))
		if i > 0 {
			tasks[i].DependsOn = []string{tasks[i-1].ID}
		}
		if i < n/2 {
			tasks[i].Status = state.Completed
		}
	}
	return tasks
}

func TestTenThousandTaskChain(t *testing.T) {
	tasks := chain(10000)
	assert.Empty(t, Validate(tasks))
	assert.Equal(t, []string{"task-05000"}, ids(Candidates(tasks)))
}

func BenchmarkSchedule(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		tasks := chain(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Validate(tasks)
				Candidates(tasks)
				Count(tasks)
			}
		})
	}
}

var fixed = mustTime("2025-07-01T10:00:00Z")
