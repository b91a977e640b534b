package state

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/harness-agent/harness/internal/failure"
)

func TestCheckID(t *testing.T) {
	for _, id := range []string{"task-001", "auth-login", "A.b_c-9", "1", strings.Repeat("x", MaxIDLength)} {
		assert.NoError(t, CheckID(id), id)
	}
	for _, id := range []string{"", "has space", "evil\n[2099-01-01T00:00:00Z] [SESSION-9] Completed [task-001]",
		"-flag", ".hidden", "_x", "a/b", "a..b", "a.", "x.lock", "a~1", "a^", "a:b", "a@{1}", "a[0]", "é",
		strings.Repeat("x", MaxIDLength+1)} {
		err := CheckID(id)
		assert.True(t, failure.Is(err, failure.Config), "%q: %v", id, err)
	}
}

func TestMeant(t *testing.T) {
	s := &State{Tasks: []Task{{ID: "task-001"}, {ID: "task-003"}, {ID: "task-010"}, {ID: "auth-3"}, {ID: "Parser"}}}
	for _, tc := range []struct{ typed, want string }{
		{"task-1", "task-001"},
		{"1", "task-001"},
		{"TASK-001", "task-001"},
		{"#10", "task-010"},
		{"task-0010", "task-010"},
		{"parser", "Parser"},
		{"task-3", ""}, // task-003 and auth-3 both end in 3
		{"task-2", ""},
		{"task-", ""},
		{"nope", ""},
		{"task-99999999999999999999", ""},
	} {
		assert.Equal(t, tc.want, s.Meant(tc.typed), tc.typed)
	}
	assert.Equal(t, "did you mean task-001? (`harness status` lists the task ids)", s.IDHint("task-1"))
	assert.Equal(t, "`harness status` lists the task ids", s.IDHint("task-2"))
}
