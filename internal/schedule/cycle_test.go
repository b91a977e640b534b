package schedule

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/harness-agent/harness/internal/state"
)

func names(cs []Cycle) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

func TestCycles(t *testing.T) {
	marked := tk("task-003", state.Failed, "P1", "task-002")
	marked.ErrorLog = []string{"[DEPENDENCY] Circular dependency detected: task-003 -> task-002 -> task-003"}
	tests := []struct {
		name  string
		tasks []state.Task
		want  []string
	}{
		{"none", []state.Task{tk("a", state.Pending, "P0"), tk("b", state.Pending, "P0", "a")}, nil},
		{"self reference", []state.Task{tk("a", state.Pending, "P0", "a")}, []string{"a → a"}},
		{"named from its first id", []state.Task{tk("task-003", state.Pending, "P0", "task-002"), tk("task-002", state.Pending, "P0", "task-003")},
			[]string{"task-002 → task-003 → task-002"}},
		{"ids in natural order", []state.Task{tk("task-10", state.Pending, "P0", "task-9"), tk("task-9", state.Pending, "P0", "task-10")},
			[]string{"task-9 → task-10 → task-9"}},
		{"the shortest through the first", []state.Task{
			tk("a", state.Pending, "P0", "b", "c"), tk("b", state.Pending, "P0", "c"), tk("c", state.Pending, "P0", "a")},
			[]string{"a → c → a"}},
		{"one per group, groups by first id", []state.Task{
			tk("x", state.Pending, "P0", "y"), tk("y", state.Pending, "P0", "x"),
			tk("b", state.Pending, "P0", "c"), tk("c", state.Pending, "P0", "b"), tk("d", state.Pending, "P0", "b")},
			[]string{"b → c → b", "x → y → x"}},
		{"already failed for it", []state.Task{tk("task-002", state.Pending, "P0", "task-003"), func() state.Task {
			m := marked
			m.ID, m.DependsOn = "task-003", []string{"task-002"}
			return m
		}()}, []string{"task-002 → task-003 → task-002"}},
		{"a completed task breaks it", []state.Task{tk("a", state.Completed, "P0", "b"), tk("b", state.Pending, "P0", "a")}, nil},
		{"unknown dependencies are no cycle", []state.Task{tk("a", state.Pending, "P0", "ghost")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, names(Cycles(tt.tasks)))
		})
	}
}

func TestCycleString(t *testing.T) {
	long := Cycle{}
	for i := range 12 {
		long = append(long, fmt.Sprintf("t%d", i))
	}
	long = append(long, "t0")
	tests := []struct {
		cycle Cycle
		want  string
	}{
		{Cycle{"a", "a"}, "a → a"},
		{Cycle{"task-002", "task-003", "task-002"}, "task-002 → task-003 → task-002"},
		{long, "t0 → t1 → t2 → t3 → t4 → t5 → … (6 more) → t0"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.cycle.String())
	}
}

func TestCycleThrough(t *testing.T) {
	tasks := []state.Task{
		tk("a", state.Pending, "P0", "b"), tk("b", state.Pending, "P0", "c"), tk("c", state.Pending, "P0", "a"),
		tk("d", state.Pending, "P0", "a"), tk("e", state.Pending, "P0", "e"),
	}
	tests := []struct {
		id   string
		want string
	}{
		{"a", "a → b → c → a"},
		{"c", "c → a → b → c"},
		{"d", ""}, // it waits on a cycle, it is on none
		{"e", "e → e"},
		{"ghost", ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got := CycleThrough(tasks, tt.id)
			if tt.want == "" {
				assert.Nil(t, got)
				return
			}
			assert.Equal(t, tt.want, got.String())
		})
	}
}

func TestUnfinished(t *testing.T) {
	tasks := []state.Task{tk("a", state.Completed, "P0"), tk("b", state.Pending, "P0"), tk("c", state.Completed, "P0", "a", "b", "ghost")}
	assert.Equal(t, []string{"b", "ghost"}, Unfinished(tasks, "c"))
	assert.Empty(t, Unfinished(tasks, "a"))
}

// depFailed is a task failed [DEPENDENCY] with message msg.
func depFailed(id, msg string, deps ...string) state.Task {
	t := tk(id, state.Failed, "P1", deps...)
	t.ErrorLog = []string{"[DEPENDENCY] " + msg}
	return t
}

func TestReopen(t *testing.T) {
	exhausted := tk("x", state.Failed, "P1")
	exhausted.Attempts, exhausted.ErrorLog = 3, []string{"[TEST_FAIL] a", "[TEST_FAIL] b", "[TEST_FAIL] c"}
	tests := []struct {
		name  string
		tasks []state.Task
		ids   []string
		want  []string // "id: message"
	}{
		{"failed for good on its own", []state.Task{exhausted}, []string{"x"}, nil},
		{"cycle fixed", []state.Task{depFailed("a", "Circular", "b"), depFailed("b", "Circular")}, []string{"a", "b"}, nil},
		{"still in a cycle", []state.Task{depFailed("a", "Circular", "b"), depFailed("b", "Circular", "a")}, []string{"a"},
			[]string{"a: Circular dependency detected: a -> b -> a"}},
		{"its dependency not reopened with it", []state.Task{depFailed("a", "Circular", "b"), depFailed("b", "Circular")}, []string{"a"},
			[]string{"a: Blocked by failed b"}},
		{"blocked by a task failed for good", []state.Task{exhausted, depFailed("a", "Blocked by failed x", "x")}, []string{"a"},
			[]string{"a: Blocked by failed x"}},
		{"both reopened", []state.Task{exhausted, depFailed("a", "Blocked by failed x", "x")}, []string{"x", "a"}, nil},
		{"others' trouble is not its own", []state.Task{tk("p", state.Pending, "P0", "ghost"), exhausted}, []string{"x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprint(tt.tasks)
			var got []string
			for _, m := range Reopen(tt.tasks, tt.ids) {
				got = append(got, m.ID+": "+m.Message)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, before, fmt.Sprint(tt.tasks), "tasks unchanged")
		})
	}
}

func TestReopenable(t *testing.T) {
	exhausted := tk("x", state.Failed, "P1")
	exhausted.Attempts = 3
	retried := tk("r", state.Failed, "P1")
	retried.Attempts, retried.ErrorLog = 1, []string{"[DEPENDENCY] Circular", "[TEST_FAIL] exit 1"}
	tests := []struct {
		name  string
		tasks []state.Task
		want  []string
	}{
		{"a fixed cycle, and what it blocked", []state.Task{depFailed("a", "Circular", "b"), depFailed("b", "Circular"), depFailed("c", "Blocked by failed a", "a")},
			[]string{"a", "b", "c"}},
		{"a cycle still there", []state.Task{depFailed("a", "Circular", "b"), depFailed("b", "Circular", "a")}, nil},
		{"blocked by one failed for good, and what waits on it", []state.Task{exhausted, depFailed("a", "Blocked by failed x", "x"), depFailed("b", "Blocked by failed a", "a")}, nil},
		{"only those free", []state.Task{exhausted, depFailed("a", "Blocked by failed x", "x"), depFailed("b", "Blocked by failed x")},
			[]string{"b"}},
		{"a failure after a retry is not a dependency one", []state.Task{retried}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Reopenable(tt.tasks))
		})
	}
}

func TestChoose(t *testing.T) {
	withCheck := func(task state.Task) state.Task { task.Command = "true"; return task }
	tests := []struct {
		name    string
		tasks   []state.Task
		next    string
		skipped []string
	}{
		{"the first with a check", []state.Task{tk("a", state.Pending, "P0"), withCheck(tk("b", state.Pending, "P1")), tk("c", state.Pending, "P2")},
			"b", []string{"a"}},
		{"none with a check", []state.Task{tk("a", state.Pending, "P0"), tk("b", state.Pending, "P1")}, "", []string{"a", "b"}},
		{"nothing eligible", []state.Task{withCheck(tk("a", state.Pending, "P0", "b")), tk("b", state.InProgress, "P0")}, "", nil},
		{"first is fine", []state.Task{withCheck(tk("a", state.Pending, "P0")), tk("b", state.Pending, "P0")}, "a", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Choose(tt.tasks)
			next := ""
			if c.Next != nil {
				next = c.Next.ID
			}
			assert.Equal(t, tt.next, next)
			assert.Equal(t, tt.skipped, ids(c.Skipped))
			if next == "" && len(tt.skipped) > 0 {
				assert.Equal(t, NoCheck, c.Why(tt.tasks))
			} else if next == "" {
				assert.Equal(t, Explain(tt.tasks), c.Why(tt.tasks))
			}
		})
	}
}

func TestDormantCycles(t *testing.T) {
	done := []state.Task{tk("a", state.Completed, "P0", "c"), tk("b", state.Completed, "P0", "a"), tk("c", state.Completed, "P0", "b")}
	assert.Equal(t, []string{"a → c → b → a"}, names(DormantCycles(done)))
	assert.Empty(t, Cycles(done), "no live cycle")
	assert.Equal(t, "a → c → b → a", PlanCycleThrough(done, "a").String())
	mixed := []state.Task{tk("a", state.Completed, "P0", "b"), tk("b", state.Pending, "P0", "a"), tk("x", state.Pending, "P0", "y"), tk("y", state.Pending, "P0", "x")}
	assert.Equal(t, []string{"a → b → a"}, names(DormantCycles(mixed)), "a live cycle is not dormant")
	assert.Nil(t, DormantCycles([]state.Task{tk("a", state.Completed, "P0"), tk("b", state.Pending, "P0", "a")}))
}
