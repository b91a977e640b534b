package workers

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/harness-agent/harness/internal/state"
)

func TestWorkerEnvPinsTheStateRootAndDropsTheSession(t *testing.T) {
	env := workerEnv([]string{"PATH=/bin", "CLAUDE_CODE_SESSION_ID=outer", "CLAUDE_PID=7", "CLAUDECODE=1",
		"HARNESS_STATE_ROOT=/elsewhere", "HARNESS_WORKER_ID=me", "HOME=/h"}, "/project", "w2")
	assert.Equal(t, []string{"PATH=/bin", "HOME=/h", "HARNESS_STATE_ROOT=/project", "HARNESS_WORKER_ID=w2"}, env)
}

func TestIsWorkerID(t *testing.T) {
	for id, want := range map[string]bool{"w1": true, "w12": true, "w": false, "wx": false, "session:abc": false, "": false, "w1a": false} {
		assert.Equal(t, want, isWorkerID(id), id)
	}
}

func TestReleaseLeavesTheQueueAndOthersAlone(t *testing.T) {
	s := &state.State{Tasks: []state.Task{
		{ID: "a", Status: state.InProgress, ClaimedBy: "w1", LeaseExpiresAt: "x", Generation: 2},
		{ID: "b", Status: state.InProgress, ClaimedBy: "w2", ValidatedCommit: "abc"},
		{ID: "c", Status: state.InProgress, ClaimedBy: "session:s"},
		{ID: "d", Status: state.Pending},
	}}
	msgs := release(s, isWorkerID)
	assert.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "a released: its worker w1 was stopped")
	assert.Equal(t, state.Pending, s.Tasks[0].Status)
	assert.Empty(t, s.Tasks[0].ClaimedBy)
	assert.Equal(t, 2, s.Tasks[0].Generation, "the generation survives a release")
	assert.Equal(t, state.InProgress, s.Tasks[1].Status, "a task in the merge queue stays there")
	assert.Equal(t, "session:s", s.Tasks[2].ClaimedBy, "not a supervisor's worker")
}

func TestLastLineOf(t *testing.T) {
	tail := []string{
		"[t] [SESSION-1] Starting [task-001] One (base=abc)",
		"[t] [SESSION-1] LOCK task-001 claimed (lease_expires_at=x worker=w1)",
		"[t] [SESSION-1] CHECKPOINT [task-001] step=1/2 \"half\"",
		"[t] [SESSION-1] MERGE [task-002] queued: validation passed in w2's tree (commit c, base b)",
	}
	assert.Equal(t, tail[2], lastLineOf(tail, "task-001", "w1"))
	assert.Equal(t, tail[3], lastLineOf(tail, "", "w2"))
	assert.Equal(t, "", lastLineOf(tail, "", "w3"))
}
