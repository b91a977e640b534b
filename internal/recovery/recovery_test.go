package recovery

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/harness-agent/harness/internal/git"
)

// TestDecide is the protocol's decision matrix, row by row.
func TestDecide(t *testing.T) {
	commit := []git.Commit{{Hash: "abc", Subject: "task-001: work"}}
	tests := []struct {
		name string
		f    Facts
		want Row
	}{
		{"no changes, no commits, no checkpoints", Facts{}, NoProgress},
		{"no changes, no commits, checkpoints", Facts{Checkpoints: 2}, CheckpointsOnly},
		{"commits only", Facts{TaskCommits: commit}, CommittedOnly},
		{"commits and checkpoints", Facts{TaskCommits: commit, Checkpoints: 1}, CommittedOnly},
		{"uncommitted only", Facts{Uncommitted: []string{"a.go"}}, UncommittedOnly},
		{"both", Facts{Uncommitted: []string{"a.go"}, TaskCommits: commit}, Both},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Decide(tt.f))
		})
	}
	assert.False(t, NoProgress.NeedsValidation())
	assert.False(t, CheckpointsOnly.NeedsValidation())
	assert.True(t, Both.NeedsValidation())
	assert.Equal(t, "uncommitted=1 task_commits=0 checkpoints=0 base_missing", Facts{Uncommitted: []string{"x"}, BaseMissing: true}.Summary())
}
