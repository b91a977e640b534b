package schedule

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

func TestChooseSpread(t *testing.T) {
	var tasks []state.Task
	for _, id := range []string{"t1", "t2", "t3", "t4", "t5", "t6"} {
		tk := tk(id, state.Pending, "P1")
		tk.Command = "true"
		tasks = append(tasks, tk)
	}
	urgent := tk("t0", state.Pending, "P0")
	urgent.Command = "true"

	picked := map[string]bool{}
	for _, w := range []string{"m1-w1", "m1-w2", "m2-w1", "m2-w2", "m3-w1", "m3-w2"} {
		got := ChooseSpread(tasks, w, nil)
		if assert.NotNil(t, got.Next) {
			picked[got.Next.ID] = true
			assert.Equal(t, got.Next.ID, ChooseSpread(tasks, w, nil).Next.ID, "the same worker picks the same task")
		}
		assert.Equal(t, "t0", ChooseSpread(append([]state.Task{urgent}, tasks...), w, nil).Next.ID, "a higher priority comes first")
	}
	assert.Greater(t, len(picked), 2, "six workers spread over several of six equal tasks, not one: %v", picked)

	one := []state.Task{tasks[0]}
	assert.Equal(t, "t1", ChooseSpread(one, "m2-w1", nil).Next.ID)
	assert.Nil(t, ChooseSpread(nil, "m2-w1", nil).Next)
}

// TestChooseSpreadShares: machines that choose at the same instant take
// tasks of their own shares, never one task twice, until a share runs out.
func TestChooseSpreadShares(t *testing.T) {
	var tasks []state.Task
	for i := range 40 {
		tk := tk(fmt.Sprintf("task-%03d", i+1), state.Pending, "P1")
		tk.Command = "true"
		tasks = append(tasks, tk)
	}
	machines := []string{"m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"}
	tests := []struct {
		name     string
		machines []string
		workers  []string
	}{
		{"8 machines", machines, []string{"m1-w1", "m2-w1", "m3-w1", "m4-w1", "m5-w1", "m6-w1", "m7-w1", "m8-w1"}},
		{"3 machines, named apart", []string{"laptop.k3x9a2", "ci.7qv0cd", "build1"}, []string{"laptop.k3x9a2-w1", "ci.7qv0cd-w3", "build1-w2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			picked := map[string]string{}
			for _, w := range tt.workers {
				got := ChooseSpread(tasks, w, tt.machines)
				require.NotNil(t, got.Next)
				machine, _, _ := strings.Cut(w, "-")
				assert.Equal(t, machine, tt.machines[hash(got.Next.ID)%uint32(len(tt.machines))], "%s takes a task of its machine's share", w)
				if was, ok := picked[got.Next.ID]; ok {
					t.Errorf("%s and %s both took %s", was, w, got.Next.ID)
				}
				picked[got.Next.ID] = w
			}
		})
	}
	// A machine whose share is done takes from the others'.
	var mine []state.Task
	for _, tk := range tasks {
		if machines[hash(tk.ID)%8] != "m1" {
			mine = append(mine, tk)
		}
	}
	got := ChooseSpread(mine, "m1-w1", machines)
	require.NotNil(t, got.Next, "m1's share is done: it takes another's")
}
