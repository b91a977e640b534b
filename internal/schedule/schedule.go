// Package schedule is the protocol's Task Selection Algorithm: dependency
// validation (cycles, blocked propagation), the choice of the next task, and
// the STATS counts. It decides; it never writes: callers apply its marks to
// the state under the transaction lock.
package schedule

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/state"
)

// Mark is a task dependency validation says must be failed, with the
// [DEPENDENCY] message to record.
type Mark struct {
	Index   int
	ID      string
	Message string // without the "[DEPENDENCY] " prefix
}

// Validate runs cycle detection and then blocked propagation to a fixpoint
// over tasks and returns the tasks to mark failed, in the order found. tasks
// is not modified.
func Validate(tasks []state.Task) []Mark {
	byID := make(map[string]int, len(tasks))
	for i := range tasks {
		byID[tasks[i].ID] = i
	}
	marked := map[int]bool{}
	var marks []Mark
	open := func(i int) bool {
		t := &tasks[i]
		return !marked[i] && (t.Status == state.Pending || t.Status == state.Failed && !t.PermanentlyFailed())
	}
	onCycle := cyclic(tasks, byID)
	for i := range tasks {
		if !open(i) || !onCycle[i] {
			continue
		}
		if cycle := findCycle(tasks, byID, i); cycle != nil {
			marked[i] = true
			marks = append(marks, Mark{Index: i, ID: tasks[i].ID,
				Message: "Circular dependency detected: " + strings.Join(cycle, " -> ")})
		}
	}
	dead := func(i int) bool { return marked[i] || tasks[i].PermanentlyFailed() }
	for changed := true; changed; {
		changed = false
		for i := range tasks {
			if !open(i) {
				continue
			}
			for _, dep := range tasks[i].DependsOn {
				j, known := byID[dep]
				var msg string
				switch {
				case !known:
					msg = "Unknown dependency " + dep
				case dead(j):
					msg = "Blocked by failed " + dep
				default:
					continue
				}
				marked[i] = true
				marks = append(marks, Mark{Index: i, ID: tasks[i].ID, Message: msg})
				changed = true
				break
			}
		}
	}
	return marks
}

// deps returns the dependencies of task i that can take part in a cycle:
// known and not completed.
func deps(tasks []state.Task, byID map[string]int, i int) []int {
	var out []int
	for _, dep := range tasks[i].DependsOn {
		if j, ok := byID[dep]; ok && tasks[j].Status != state.Completed {
			out = append(out, j)
		}
	}
	return out
}

// cyclic marks the tasks that lie on a dependency cycle, in linear time
// (Tarjan's strongly connected components).
func cyclic(tasks []state.Task, byID map[string]int) []bool {
	n := len(tasks)
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	next := 0
	var connect func(v int)
	connect = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range deps(tasks, byID, v) {
			if index[w] < 0 {
				connect(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var scc []int
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			scc = append(scc, w)
			if w == v {
				break
			}
		}
		if len(scc) > 1 {
			for _, w := range scc {
				on[w] = true
			}
		} else {
			for _, d := range deps(tasks, byID, v) {
				on[v] = on[v] || d == v
			}
		}
	}
	for i := range tasks {
		if index[i] < 0 && tasks[i].Status != state.Completed {
			connect(i)
		}
	}
	return on
}

// findCycle returns the shortest dependency chain from task start back to
// itself ("a -> b -> a"), or nil when there is none.
func findCycle(tasks []state.Task, byID map[string]int, start int) []string {
	prev := map[int]int{}
	queue := []int{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range deps(tasks, byID, v) {
			if w == start {
				path := []string{tasks[start].ID}
				for u := v; u != start; u = prev[u] {
					path = append(path, tasks[u].ID)
				}
				if v != start || len(path) == 1 {
					// path holds start then the chain backwards: reverse the chain part.
					chain := path[1:]
					for a, b := 0, len(chain)-1; a < b; a, b = a+1, b-1 {
						chain[a], chain[b] = chain[b], chain[a]
					}
				}
				return append(path, tasks[start].ID)
			}
			if _, seen := prev[w]; !seen && w != start {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return nil
}

// Apply records marks on s: status failed, a [DEPENDENCY] error_log entry,
// failed_at set. It returns the error_log lines written, for the progress log.
func Apply(s *state.State, marks []Mark, now time.Time) {
	for _, m := range marks {
		t := &s.Tasks[m.Index]
		t.Status = state.Failed
		t.ErrorLog = append(t.ErrorLog, "["+failure.Dependency+"] "+m.Message)
		t.FailedAt = now.UTC().Format(time.RFC3339)
	}
}

// Rank orders priorities: P0 first, unknown or missing last.
func Rank(priority string) int {
	switch priority {
	case "P0":
		return 0
	case "P1":
		return 1
	case "P2":
		return 2
	}
	return 3
}

// Eligible reports whether t could be claimed now: pending or retryable
// failed, with every dependency completed.
func Eligible(tasks []state.Task, byID map[string]int, t *state.Task) bool {
	switch {
	case t.Status == state.Pending:
	case t.Status == state.Failed && !t.PermanentlyFailed():
	default:
		return false
	}
	for _, dep := range t.DependsOn {
		j, ok := byID[dep]
		if !ok || tasks[j].Status != state.Completed {
			return false
		}
	}
	return true
}

// Candidates returns the eligible tasks in the order the protocol picks them:
// pending tasks by priority then id, then retryable failed tasks by priority
// then oldest failure.
func Candidates(tasks []state.Task) []*state.Task {
	byID := Index(tasks)
	var pending, retry []*state.Task
	for i := range tasks {
		t := &tasks[i]
		if !Eligible(tasks, byID, t) {
			continue
		}
		if t.Status == state.Pending {
			pending = append(pending, t)
		} else {
			retry = append(retry, t)
		}
	}
	sort.SliceStable(pending, func(a, b int) bool {
		x, y := pending[a], pending[b]
		if Rank(x.Priority) != Rank(y.Priority) {
			return Rank(x.Priority) < Rank(y.Priority)
		}
		return IDLess(x.ID, y.ID)
	})
	sort.SliceStable(retry, func(a, b int) bool {
		x, y := retry[a], retry[b]
		if Rank(x.Priority) != Rank(y.Priority) {
			return Rank(x.Priority) < Rank(y.Priority)
		}
		if x.FailedAt != y.FailedAt {
			return x.FailedAt < y.FailedAt
		}
		return IDLess(x.ID, y.ID)
	})
	return append(pending, retry...)
}

// Index maps task ids to positions.
func Index(tasks []state.Task) map[string]int {
	m := make(map[string]int, len(tasks))
	for i := range tasks {
		m[tasks[i].ID] = i
	}
	return m
}

// IDLess orders ids naturally, so task-9 comes before task-10.
func IDLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da != "" && db != "" {
			na, _ := strconv.ParseUint(strings.TrimLeft(da, "0"), 10, 64)
			nb, _ := strconv.ParseUint(strings.TrimLeft(db, "0"), 10, 64)
			if na != nb {
				return na < nb
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// Why says why no task is eligible.
type Why string

const (
	AllDone Why = "all tasks completed"
	Empty   Why = "no tasks yet"
	Blocked Why = "every remaining task failed permanently or is blocked by one"
	Waiting Why = "the remaining tasks wait on work in progress"
)

// Explain says why Candidates found nothing.
func Explain(tasks []state.Task) Why {
	if len(tasks) == 0 {
		return Empty
	}
	inProgress, open := 0, 0
	for i := range tasks {
		switch t := &tasks[i]; {
		case t.Status == state.InProgress:
			inProgress++
		case t.Status == state.Pending, t.Status == state.Failed && !t.PermanentlyFailed():
			open++
		}
	}
	switch {
	case inProgress > 0:
		return Waiting
	case open > 0:
		return Blocked // pending tasks whose dependencies can never complete
	}
	for i := range tasks {
		if tasks[i].Status != state.Completed {
			return Blocked
		}
	}
	return AllDone
}

// Stats are the counts of the protocol's STATS line, plus in_progress.
type Stats struct {
	Total, Completed, Failed, Pending, Blocked, InProgress, Attempts, Checkpoints int
}

// Count computes the stats of tasks. blocked counts pending tasks that depend
// on a permanently failed task; it is never stored.
func Count(tasks []state.Task) Stats {
	byID := Index(tasks)
	var st Stats
	st.Total = len(tasks)
	for i := range tasks {
		t := &tasks[i]
		st.Attempts += t.Attempts
		st.Checkpoints += len(t.Checkpoints)
		switch t.Status {
		case state.Completed:
			st.Completed++
		case state.Failed:
			st.Failed++
		case state.InProgress:
			st.InProgress++
		case state.Pending:
			st.Pending++
			for _, dep := range t.DependsOn {
				if j, ok := byID[dep]; ok && tasks[j].PermanentlyFailed() {
					st.Blocked++
					break
				}
			}
		}
	}
	return st
}

// Line renders the STATS message exactly as the protocol writes it.
func (s Stats) Line() string {
	return fmt.Sprintf("tasks_total=%d completed=%d failed=%d pending=%d blocked=%d attempts_total=%d checkpoints=%d",
		s.Total, s.Completed, s.Failed, s.Pending, s.Blocked, s.Attempts, s.Checkpoints)
}

// Counts renders the status counts for humans and the model.
func (s Stats) Counts() string {
	return fmt.Sprintf("pending=%d in_progress=%d completed=%d failed=%d blocked=%d total=%d",
		s.Pending, s.InProgress, s.Completed, s.Failed, s.Blocked, s.Total)
}
