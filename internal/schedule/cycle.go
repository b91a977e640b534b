package schedule

import (
	"sort"
	"strings"

	"github.com/harness-agent/harness/internal/state"
)

// Cycle is one dependency cycle: task ids, each depending on the next, the
// first repeated at the end ("a", "b", "a": a waits on b, b on a). No task
// on it can ever start.
type Cycle []string

// String names the cycle as people read it, "a → b → a", shortened like
// the [DEPENDENCY] messages when it is long.
func (c Cycle) String() string { return strings.Join(shorten(c), " → ") }

// Cycles returns one cycle for each group of tasks that wait on each other
// (the cycles dependency validation fails with [DEPENDENCY]), whether or
// not they were failed for it yet: the shortest cycle through the group's
// first task by id, the groups in that order. A completed task's
// dependencies take no part, as in Validate. Linear in tasks and
// dependencies.
func Cycles(tasks []state.Task) []Cycle {
	return cyclesOf(tasks, newGraph(tasks, Index(tasks)))
}

// DormantCycles returns the cycles of the plan as written that pass through
// a completed task, which Cycles leaves out: they hold nothing up today, but
// a task on one that is reopened (the verification gate, a retry) could
// never start again, and the graph draws the loop.
func DormantCycles(tasks []state.Task) []Cycle {
	var out []Cycle
	byID := Index(tasks)
	for _, c := range cyclesOf(tasks, newPlanGraph(tasks, byID)) {
		for _, id := range c {
			if tasks[byID[id]].Status == state.Completed {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// PlanCycleThrough is CycleThrough over the plan as written, completed
// tasks' dependencies included: what an edit must not make, although no
// claim would fail for it today.
func PlanCycleThrough(tasks []state.Task, id string) Cycle {
	byID := Index(tasks)
	i, ok := byID[id]
	if !ok {
		return nil
	}
	g := newPlanGraph(tasks, byID)
	comp, _ := g.cycles()
	if comp[i] < 0 {
		return nil
	}
	return Cycle(g.ids(g.shortestCycle(comp, i)))
}

func cyclesOf(tasks []state.Task, g *graph) []Cycle {
	comp, size := g.cycles()
	first := make([]int, len(size))
	for c := range first {
		first[c] = -1
	}
	for i, c := range comp {
		if c >= 0 && (first[c] < 0 || IDLess(tasks[i].ID, tasks[first[c]].ID)) {
			first[c] = i
		}
	}
	sort.Slice(first, func(a, b int) bool { return IDLess(tasks[first[a]].ID, tasks[first[b]].ID) })
	out := make([]Cycle, 0, len(first))
	for _, i := range first {
		out = append(out, Cycle(g.ids(g.shortestCycle(comp, i))))
	}
	return out
}

// CycleThrough returns the shortest cycle from task id back to itself, nil
// when it lies on none: what a change of id's dependencies must not make.
func CycleThrough(tasks []state.Task, id string) Cycle {
	byID := Index(tasks)
	i, ok := byID[id]
	if !ok {
		return nil
	}
	g := newGraph(tasks, byID)
	comp, _ := g.cycles()
	if comp[i] < 0 {
		return nil
	}
	return Cycle(g.ids(g.shortestCycle(comp, i)))
}

// Unfinished returns the dependencies of task id that are not completed
// (unknown ones included): a completed task cannot be made to wait on them,
// its work is done.
func Unfinished(tasks []state.Task, id string) []string {
	byID := Index(tasks)
	i, ok := byID[id]
	if !ok {
		return nil
	}
	var out []string
	for _, d := range tasks[i].DependsOn {
		if j, ok := byID[d]; !ok || tasks[j].Status != state.Completed {
			out = append(out, d)
		}
	}
	return out
}
