package workers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/harness-agent/harness/internal/remote"
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
	msgs := release(s, (&Supervisor{}).own)
	assert.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "a released: its worker w1 was stopped")
	assert.Equal(t, state.Pending, s.Tasks[0].Status)
	assert.Empty(t, s.Tasks[0].ClaimedBy)
	assert.Equal(t, 2, s.Tasks[0].Generation, "the generation survives a release")
	assert.Equal(t, state.InProgress, s.Tasks[1].Status, "a task in the merge queue stays there")
	assert.Equal(t, "session:s", s.Tasks[2].ClaimedBy, "not a supervisor's worker")
}

// Three clones on one host once all took the host's name: each
// supervisor released the others' claims as its own, and the job ended
// with nothing done. A claim carries its clone's id, and a supervisor
// releases only the claims made from its own clone.
func TestSharedReleaseTakesOnlyThisClonesClaims(t *testing.T) {
	s := &state.State{Tasks: []state.Task{
		{ID: "mine", Status: state.InProgress, ClaimedBy: "vm-w1", ClaimedClone: "aaaaaa"},
		{ID: "twin", Status: state.InProgress, ClaimedBy: "vm-w1", ClaimedClone: "bbbbbb"},
		{ID: "unproven", Status: state.InProgress, ClaimedBy: "vm-w2"},
		{ID: "other", Status: state.InProgress, ClaimedBy: "m2-w1", ClaimedClone: "aaaaaa"},
	}}
	sv := &Supervisor{o: Options{Shared: &remote.Config{Remote: "origin", Machine: "vm", Clone: "aaaaaa"}}}
	msgs := release(s, sv.own)
	assert.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "mine released")
	for _, id := range []string{"twin", "unproven", "other"} {
		assert.Equal(t, state.InProgress, s.Task(id).Status, id)
	}
}

func TestInUse(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	lease := 30 * time.Minute
	tests := []struct {
		name string
		b    RemoteBoard
		last time.Time
		want bool
	}{
		{"no board: a new name", RemoteBoard{}, time.Time{}, false},
		{"this clone's own board", RemoteBoard{Clone: "aaaaaa"}, now, false},
		{"another live clone", RemoteBoard{Clone: "bbbbbb"}, now.Add(-time.Minute), true},
		{"another clone whose supervisor ended", RemoteBoard{Clone: "bbbbbb", Ended: "job done"}, now, false},
		{"another clone silent past the lease", RemoteBoard{Clone: "bbbbbb"}, now.Add(-lease - time.Second), false},
		{"a board from before clone ids", RemoteBoard{Workers: []RemoteWorker{{ID: "vm-w1"}}}, now, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			until, got := InUse(tt.b, tt.last, "aaaaaa", now, lease)
			assert.Equal(t, tt.want, got)
			if got {
				assert.Equal(t, tt.last.Add(lease), until)
			}
		})
	}
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

// A machine cut off from the remote ran its merge queue at every poll,
// and each run printed the same failed fetch, 15 errors of six lines in
// 15 s beside the one line that says the remote cannot be reached. The
// queue waits until the remote answers.
func TestTheQueueWaitsForTheRemote(t *testing.T) {
	s := &state.State{Tasks: []state.Task{
		{ID: "a", Status: state.InProgress, ClaimedBy: "m1-w1", ValidatedCommit: "abc", ValidatedAt: "2026-01-01T00:00:00Z"},
	}}
	sv := &Supervisor{o: Options{Shared: &remote.Config{Remote: "origin", Machine: "m1"}, Now: time.Now}}
	assert.True(t, sv.batchReady(s))
	sv.offline = "the remote cannot be reached"
	assert.False(t, sv.batchReady(s))
}
