package schedule

import (
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
	var busy [][]string
	for i := range tasks {
		if t := &tasks[i]; t.Status == state.InProgress && len(t.AllowedPaths) > 0 {
			busy = append(busy, t.AllowedPaths)
		}
	}
	if len(busy) == 0 {
		return c
	}
	overlaps := func(t *state.Task) bool {
		for _, b := range busy {
			if scope.Overlap(t.AllowedPaths, b) {
				return true
			}
		}
		return false
	}
	for _, t := range Candidates(tasks) {
		if strings.TrimSpace(t.Command) != "" && !overlaps(t) {
			return Choice{Next: t, Skipped: c.Skipped}
		}
	}
	return c
}
