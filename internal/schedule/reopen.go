package schedule

import (
	"slices"

	"github.com/harness-agent/harness/internal/state"
)

// Reopen returns what dependency validation would fail among the tasks ids
// if they were reopened together (pending, no attempts spent): a cycle, a
// dependency unknown or failed for good. None means `harness retry` may
// reopen them; a task it would fail again is not reopened, or claim would
// fail it at once. tasks is not modified.
func Reopen(tasks []state.Task, ids []string) []Mark {
	byID := Index(tasks)
	after := slices.Clone(tasks)
	for _, id := range ids {
		if i, ok := byID[id]; ok {
			after[i].Status, after[i].Attempts = state.Pending, 0
		}
	}
	var marks []Mark
	for _, m := range Validate(after) {
		if slices.Contains(ids, m.ID) {
			marks = append(marks, m)
		}
	}
	return marks
}

// Reopenable returns the tasks failed [DEPENDENCY] whose dependencies are
// fixed now (a cycle broken, a failed dependency replaced): the largest
// set Reopen accepts together, in file order. A [DEPENDENCY] failure is
// for good, so nothing brings them back but a person's `harness retry`.
func Reopenable(tasks []state.Task) []string {
	var ids []string
	for i := range tasks {
		if t := &tasks[i]; t.Status == state.Failed && t.HasDependencyError() {
			ids = append(ids, t.ID)
		}
	}
	// Each round drops the tasks that would fail again, which may block
	// others: to a fixpoint, at most one round per task.
	for len(ids) > 0 {
		marks := Reopen(tasks, ids)
		if len(marks) == 0 {
			break
		}
		ids = slices.DeleteFunc(ids, func(id string) bool {
			return slices.ContainsFunc(marks, func(m Mark) bool { return m.ID == id })
		})
	}
	if len(ids) == 0 {
		return nil
	}
	return ids
}
