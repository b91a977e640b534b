// Package schedule is the task selection of the protocol (docs/architecture.md): dependency
// validation (cycles, blocked propagation), the choice of the next task, and
// the STATS counts. It decides; it never writes: callers apply its marks to
// the state under the transaction lock.
package schedule

import (
	"fmt"
	"slices"
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
// is not modified. Both are linear in tasks and dependencies, and
// each message is bounded (see cycleMessage): a cycle of thousands of tasks
// costs a few hundred bytes per task, once.
func Validate(tasks []state.Task) []Mark {
	byID := make(map[string]int, len(tasks))
	for i := range tasks {
		byID[tasks[i].ID] = i
	}
	marked := make([]bool, len(tasks))
	var marks []Mark
	open := func(i int) bool {
		t := &tasks[i]
		return !marked[i] && (t.Status == state.Pending || t.Status == state.Failed && !t.PermanentlyFailed())
	}
	g := newGraph(tasks, byID)
	comp, size := g.cycles()
	example := map[int][]int{} // one cycle per large component, found once
	for i := range tasks {
		if !open(i) || comp[i] < 0 {
			continue
		}
		marked[i] = true
		marks = append(marks, Mark{Index: i, ID: tasks[i].ID, Message: g.cycleMessage(comp, size, example, i)})
	}
	dead := func(i int) bool { return marked[i] || tasks[i].PermanentlyFailed() }
	// Blocked propagation: an open task is marked when a dependency is
	// unknown or dead. Every task is looked at once, and again only when a
	// task it depends on is marked, so a chain costs its length: passes
	// over all tasks until none changed took one pass per link of a chain
	// laid out against the file's order (seconds at 10,000 tasks).
	dependents := make([][]int, len(tasks))
	for i := range tasks {
		for _, dep := range tasks[i].DependsOn {
			if j, known := byID[dep]; known {
				dependents[j] = append(dependents[j], i)
			}
		}
	}
	queue := make([]int, 0, len(marks))
	for _, m := range marks {
		queue = append(queue, m.Index)
	}
	check := func(i int) {
		if !open(i) {
			return
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
			queue = append(queue, i)
			return
		}
	}
	for i := range tasks {
		check(i)
	}
	for len(queue) > 0 {
		j := queue[0]
		queue = queue[1:]
		for _, i := range dependents[j] {
			check(i)
		}
	}
	return marks
}

// graph is the dependency graph of the tasks that can take part in a cycle:
// edges from a task to its known, not completed dependencies.
type graph struct {
	tasks []state.Task
	adj   [][]int
}

func newGraph(tasks []state.Task, byID map[string]int) *graph {
	g := &graph{tasks: tasks, adj: make([][]int, len(tasks))}
	for i := range tasks {
		if tasks[i].Status == state.Completed {
			continue
		}
		for _, dep := range tasks[i].DependsOn {
			if j, ok := byID[dep]; ok && tasks[j].Status != state.Completed {
				g.adj[i] = append(g.adj[i], j)
			}
		}
	}
	return g
}

// newPlanGraph is the graph of every known dependency as written, a
// completed task's included.
func newPlanGraph(tasks []state.Task, byID map[string]int) *graph {
	g := &graph{tasks: tasks, adj: make([][]int, len(tasks))}
	for i := range tasks {
		for _, dep := range tasks[i].DependsOn {
			if j, ok := byID[dep]; ok {
				g.adj[i] = append(g.adj[i], j)
			}
		}
	}
	return g
}

// cycles returns, for each task, the strongly connected component it shares
// with others on a dependency cycle (-1 when it lies on none), and the
// components' sizes. Tarjan's algorithm, iterative, so a chain of 10,000
// dependencies needs no deep recursion.
func (g *graph) cycles() (comp []int, size []int) {
	n := len(g.tasks)
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	comp = make([]int, n)
	for i := range index {
		index[i], comp[i] = -1, -1
	}
	var stack []int
	type frame struct{ v, edge int }
	var frames []frame
	next := 0
	for root := range n {
		if index[root] >= 0 {
			continue
		}
		frames = append(frames[:0], frame{root, 0})
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			v := f.v
			if f.edge < len(g.adj[v]) {
				w := g.adj[v][f.edge]
				f.edge++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					frames = append(frames, frame{w, 0})
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			frames = frames[:len(frames)-1]
			if len(frames) > 0 {
				u := frames[len(frames)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			first := len(stack) - 1
			for stack[first] != v {
				first--
			}
			members := stack[first:]
			stack = stack[:first]
			if len(members) == 1 && !slices.Contains(g.adj[v], v) {
				onStack[v] = false
				continue
			}
			id := len(size)
			size = append(size, len(members))
			for _, w := range members {
				onStack[w] = false
				comp[w] = id
			}
		}
	}
	return comp, size
}

// smallCycle is the component size up to which every task's message names
// its own shortest cycle; above it, one cycle found for the whole component
// stands for all its tasks, so the cost stays linear.
const smallCycle = 32

// cycleMessage is the [DEPENDENCY] message of task i, which lies on a
// cycle: the shortest cycle from i back to itself when its component is
// small, else the component's size and one cycle in it; long chains are
// shortened (see chain).
func (g *graph) cycleMessage(comp, size []int, example map[int][]int, i int) string {
	c := comp[i]
	if size[c] <= smallCycle {
		return "Circular dependency detected: " + g.chain(g.shortestCycle(comp, i))
	}
	cyc, ok := example[c]
	if !ok {
		cyc = g.shortestCycle(comp, i)
		example[c] = cyc
	}
	return fmt.Sprintf("Circular dependency detected: %s is one of %d tasks that depend on each other in cycles, e.g. %s",
		g.tasks[i].ID, size[c], g.chain(cyc))
}

// maxChainIDs bounds the ids a message names: the first ones, then the
// count left out, then the last.
const maxChainIDs = 6

// chain renders a cycle "a -> b -> a", the protocol's form, shortened like
// Cycle.String.
func (g *graph) chain(cycle []int) string {
	return strings.Join(shorten(g.ids(cycle)), " -> ")
}

// ids are the ids of the tasks at indexes.
func (g *graph) ids(indexes []int) []string {
	out := make([]string, len(indexes))
	for k, v := range indexes {
		out[k] = g.tasks[v].ID
	}
	return out
}

// shorten keeps a long cycle's first ids, the number left out and its end.
func shorten(ids []string) []string {
	if len(ids) <= maxChainIDs+2 {
		return ids
	}
	out := append([]string{}, ids[:maxChainIDs]...)
	return append(out, fmt.Sprintf("… (%d more)", len(ids)-maxChainIDs-1), ids[len(ids)-1])
}

// shortestCycle returns the shortest dependency chain from task start back
// to itself, as task indexes with start at both ends. It searches only the
// start's component, where every cycle through start lies.
func (g *graph) shortestCycle(comp []int, start int) []int {
	prev := map[int]int{}
	queue := []int{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range g.adj[v] {
			if comp[w] != comp[start] {
				continue
			}
			if w == start {
				var back []int
				for u := v; u != start; u = prev[u] {
					back = append(back, u)
				}
				path := []int{start}
				for k := len(back) - 1; k >= 0; k-- {
					path = append(path, back[k])
				}
				return append(path, start)
			}
			if _, seen := prev[w]; !seen {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []int{start, start}
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
	// NoCheck is Choose's: claim takes no task without a validation command.
	NoCheck Why = "every eligible task has no validation command, so it can never be completed"
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
	// FailedByDependency are the failed tasks whose last error is
	// [DEPENDENCY]: among Failed, as the protocol counts them.
	FailedByDependency int
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
			if t.HasDependencyError() {
				st.FailedByDependency++
			}
		case state.InProgress:
			st.InProgress++
		case state.Pending:
			st.Pending++
			if PendingBlocked(tasks, byID, t) {
				st.Blocked++
			}
		}
	}
	return st
}

// PendingBlocked reports whether t is pending behind a task that failed
// for good: the protocol's computed blocked (byID: Index(tasks)).
func PendingBlocked(tasks []state.Task, byID map[string]int, t *state.Task) bool {
	if t.Status != state.Pending {
		return false
	}
	for _, dep := range t.DependsOn {
		if j, ok := byID[dep]; ok && tasks[j].PermanentlyFailed() {
			return true
		}
	}
	return false
}

// Line renders the STATS message exactly as the protocol writes it.
func (s Stats) Line() string {
	return fmt.Sprintf("tasks_total=%d completed=%d failed=%d pending=%d blocked=%d attempts_total=%d checkpoints=%d",
		s.Total, s.Completed, s.Failed, s.Pending, s.Blocked, s.Attempts, s.Checkpoints)
}

// Counts renders the status counts for humans and the model (Shown).
func (s Stats) Counts() string {
	pending, failed, blocked := s.Shown()
	return fmt.Sprintf("pending=%d in_progress=%d completed=%d failed=%d blocked=%d total=%d",
		pending, s.InProgress, s.Completed, failed, blocked, s.Total)
}

// Shown are the pending, failed and blocked counts as the status views
// word them, each task in one of them: a task held up by one that failed
// for good is blocked, whether it is still pending (the protocol's
// computed count, which its STATS line, Line, also counts as pending) or
// dependency validation has failed it with [DEPENDENCY] (failed, to Line).
// So the counts do not change when a verb runs that validation, they add
// up to the total, and they match the tasks' [blocked] labels.
func (s Stats) Shown() (pending, failed, blocked int) {
	return s.Pending - s.Blocked, s.Failed - s.FailedByDependency, s.Blocked + s.FailedByDependency
}
