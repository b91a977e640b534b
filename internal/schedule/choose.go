package schedule

import (
	"strings"

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
