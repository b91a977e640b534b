package schedule

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/harness-agent/harness/internal/state"
)

func TestChooseApart(t *testing.T) {
	scoped := func(id, status string, paths ...string) state.Task {
		t := tk(id, status, "P1")
		t.AllowedPaths = paths
		return t
	}
	for _, tc := range []struct {
		name  string
		tasks []state.Task
		want  string
	}{
		{"passes over an overlap for another eligible task",
			[]state.Task{scoped("a", state.InProgress, "src/api/**"), scoped("b", state.Pending, "src/api/handlers.go"), scoped("c", state.Pending, "docs/**")}, "c"},
		{"takes the overlap when nothing else is eligible",
			[]state.Task{scoped("a", state.InProgress, "src/api/**"), scoped("b", state.Pending, "src/api/handlers.go")}, "b"},
		{"an unscoped task overlaps nothing",
			[]state.Task{scoped("a", state.InProgress, "src/**"), scoped("b", state.Pending), scoped("c", state.Pending, "docs/**")}, "b"},
		{"a task waiting in the merge queue counts too",
			[]state.Task{func() state.Task { t := scoped("a", state.InProgress, "web/**"); t.ValidatedCommit = "abc"; return t }(),
				scoped("b", state.Pending, "web/app.js"), scoped("c", state.Pending, "cli/**")}, "c"},
		{"nothing in progress: the protocol's order",
			[]state.Task{scoped("b", state.Pending, "src/**"), scoped("c", state.Pending, "src/**")}, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.tasks {
				if tc.tasks[i].Command == "" {
					tc.tasks[i].Command = "true"
				}
			}
			got := ChooseApart(tc.tasks)
			if assert.NotNil(t, got.Next) {
				assert.Equal(t, tc.want, got.Next.ID)
			}
		})
	}
}
