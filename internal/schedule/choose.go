package schedule

import (
	"hash/fnv"
	"strings"

	"github.com/harness-agent/harness/internal/scope"
	"github.com/harness-agent/harness/internal/state"
)

// Choice is the task `harness claim` takes when given no id, and the
// eligible tasks it passes over to get there.
type Choice struct {
	// Next is the first of Candidates that has a validation command; nil
	// when none has.
	Next *state.Task
	// Skipped are the eligible tasks before Next (all of them, when Next
	// is nil) that have no validation command: claimed, one could only
	// burn attempts, since nothing can ever mark it completed.
	Skipped []*state.Task
}

// Choose picks the next task as claim does: status, next and claim
// recommend and take the same one.
func Choose(tasks []state.Task) Choice {
	var c Choice
	for _, t := range Candidates(tasks) {
		if strings.TrimSpace(t.Command) != "" {
			c.Next = t
			return c
		}
		c.Skipped = append(c.Skipped, t)
	}
	return c
}

// Why says why Next is nil: Explain's answer, or NoCheck when eligible
// tasks were passed over.
func (c Choice) Why(tasks []state.Task) Why {
	if len(c.Skipped) > 0 {
		return NoCheck
	}
	return Explain(tasks)
}

// ChooseApart is Choose for a worker among others: it passes over a task
// whose allowed_paths overlap those of a task in progress (another
// worker's, or one waiting in the merge queue) while another eligible task
// with a check does not, so that workers rarely edit the same files. When
// every candidate overlaps, it is Choose.
func ChooseApart(tasks []state.Task) Choice {
	c := Choose(tasks)
	if c.Next == nil || len(c.Next.AllowedPaths) == 0 {
		return c
	}
	overlaps := overlapping(tasks)
	for _, t := range Candidates(tasks) {
		if strings.TrimSpace(t.Command) != "" && !overlaps(t) {
			return Choice{Next: t, Skipped: c.Skipped}
		}
	}
	return c
}

// overlapping reports whether a task's allowed_paths overlap those of a
// task in progress.
func overlapping(tasks []state.Task) func(*state.Task) bool {
	var busy [][]string
	for i := range tasks {
		if t := &tasks[i]; t.Status == state.InProgress && len(t.AllowedPaths) > 0 {
			busy = append(busy, t.AllowedPaths)
		}
	}
	return func(t *state.Task) bool {
		for _, b := range busy {
			if scope.Overlap(t.AllowedPaths, b) {
				return true
			}
		}
		return false
	}
}

// ChooseSpread is ChooseApart for a worker of a job shared by several
// machines, whose claims are not serialised by one lock but race on the
// remote: every worker picking the same first task would make all but
// one lose. It takes, among the tasks ChooseApart would take as readily
// (as eligible, the same priority, a check, no overlap), one of its own
// machine's share when there is one, at the worker's place in it, so that
// workers spread over them. The order of priorities is kept.
//
// Each task falls to one of machines (the job's machines by name, the
// worker's own among them) by a hash of its id, so two machines choosing
// at the same instant take different tasks as long as each has one of its
// own: what one machine has not seen yet of another's claims is in the
// other's share. A machine whose share is done takes from the others'.
// The worker's machine is its id's part before the first '-'.
func ChooseSpread(tasks []state.Task, worker string, machines []string) Choice {
	c := ChooseApart(tasks)
	if c.Next == nil {
		return c
	}
	overlaps := overlapping(tasks)
	var same, own []*state.Task
	machine, _, _ := strings.Cut(worker, "-")
	for _, t := range Candidates(tasks) {
		if t.Status == c.Next.Status && Rank(t.Priority) == Rank(c.Next.Priority) && strings.TrimSpace(t.Command) != "" && !overlaps(t) {
			same = append(same, t)
			if len(machines) > 1 && machines[hash(t.ID)%uint32(len(machines))] == machine {
				own = append(own, t)
			}
		}
	}
	if len(own) > 0 {
		same = own
	} else if len(same) < 2 {
		return c
	}
	return Choice{Next: same[hash(worker)%uint32(len(same))], Skipped: c.Skipped}
}

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// Unchecked reports whether t is work still to do without a validation
// command: no session can complete it until a person gives it one. A
// completed task is not: its work was accepted.
func Unchecked(t *state.Task) bool {
	return t.Status != state.Completed && strings.TrimSpace(t.Command) == ""
}

// CountUnchecked is how many tasks are Unchecked.
func CountUnchecked(tasks []state.Task) int {
	n := 0
	for i := range tasks {
		if Unchecked(&tasks[i]) {
			n++
		}
	}
	return n
}
