package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/state"
)

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"taskmaster:master/*", "taskmaster:master/3.1", true},
		{"taskmaster:master/*", "taskmaster:docs/3", false},
		{"taskmaster:*/3", "taskmaster:master/3", true},
		{"taskmaster:*/3", "taskmaster:master/3.1", false},
		{"*", "", true},
		{"beads:x", "beads:x", true},
		{"beads:x", "beads:xy", false},
		{"a*b*b", "ab", false},
		{"a*b*b", "abb", true},
	} {
		assert.Equal(t, c.want, globMatch(c.pattern, c.s), "%q ~ %q", c.pattern, c.s)
	}
}

func TestSelection(t *testing.T) {
	s := &state.State{Tasks: []state.Task{
		{ID: "task-009", Status: state.Pending},
		{ID: "task-010", Status: state.Pending, Command: "true"},
		{ID: "task-011", Status: state.Completed, Source: "taskmaster:master/2"},
		{ID: "task-0012", Status: state.Pending, Source: "taskmaster:master/3"},
		{ID: "fix-10", Status: state.Failed},
		{ID: "task-041", Status: state.Pending},
	}}
	ids := func(words, wheres []string) []string {
		sel, err := newSelection(words, wheres)
		require.NoError(t, err)
		got, err := sel.tasks(s)
		require.NoError(t, err)
		var out []string
		for _, t := range got {
			out = append(out, t.ID)
		}
		return out
	}
	assert.Equal(t, []string{"task-010", "task-011", "task-0012"}, ids([]string{"task-010..task-040"}, nil))
	assert.Equal(t, []string{"task-0012"}, ids([]string{"task-010..task-040"}, []string{"no-validation"}))
	assert.Equal(t, []string{"task-009", "task-0012", "fix-10", "task-041"}, ids(nil, []string{"no-validation"}))
	assert.Equal(t, []string{"task-011", "task-0012"}, ids(nil, []string{"source=taskmaster:*"}))
	assert.Equal(t, []string{"task-009", "fix-10"}, ids([]string{"fix-10", "task-009"}, nil))

	for _, bad := range [][2]string{{"task-3..fix-4", ""}, {"task-4..task-3", ""}, {"task..task-3", ""}, {"", "status=done"}, {"", "no-validation=1"}, {"", "colour=red"}, {"", "source="}} {
		var words, wheres []string
		if bad[0] != "" {
			words = []string{bad[0]}
		}
		if bad[1] != "" {
			wheres = []string{bad[1]}
		}
		_, err := newSelection(words, wheres)
		assert.Error(t, err, "%v", bad)
	}
	sel, err := newSelection([]string{"task-404"}, nil)
	require.NoError(t, err)
	_, err = sel.tasks(s)
	assert.ErrorContains(t, err, `no task "task-404"`)
}
