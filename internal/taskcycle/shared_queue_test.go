package taskcycle

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/remote"
	"github.com/harness-agent/harness/internal/state"
)

// In a chaos run of four machines, a supervisor's merge queue took over
// another machine's queued task (it had waited a lease) while that
// machine integrated it and removed its queue ref: the queue went on with
// the task as its last poll had it, found no commit to rebase ("cannot
// rebase task-014 onto main: … reference is not a tree"), and the whole
// drain ended on that error, its own tasks left for a later poll. The
// queue takes its tasks as the state it just fetched has them: a task no
// longer queued there is run again from that state.
func TestIntegrateTakesTheQueueAsTheRemoteHasIt(t *testing.T) {
	defer isolate()()
	p := newProject(t, state.Concurrent, task("task-001", "true"))
	p.sharedBranch()
	require.NoError(t, remote.Save(p.dir, remote.Config{Remote: "origin", Machine: "m1", Clone: "aaaaaa"}))

	// m2's worker queued task-001 a lease ago; its commit is in m2's
	// repository and on the remote's queue ref, not here
	_, err := state.Update(p.dir, func(s *state.State) error {
		tk := s.Task("task-001")
		tk.Status, tk.ClaimedBy, tk.ClaimedClone, tk.Generation = state.InProgress, "m2-w1", "bbbbbb", 1
		tk.StartedAtCommit, tk.ValidatedCommit, tk.ValidatedAt = p.base, "0123456789abcdef0123456789abcdef01234567", "2026-01-01T00:00:00Z"
		return nil
	})
	require.NoError(t, err)
	stale, err := state.Load(p.dir)
	require.NoError(t, err)
	require.Len(t, queuedTasks(stale, nil), 1, "taken over: it waited a lease")

	// meanwhile m2 integrates it (and removes its queue ref)
	_, err = state.Update(p.dir, func(s *state.State) error {
		tk := s.Task("task-001")
		tk.Status, tk.IntegratedCommit = state.Completed, p.base
		tk.ClearClaim()
		return nil
	})
	require.NoError(t, err)

	_, _, err = p.worker("supervisor").integrate(context.Background(), stale, queuedTasks(stale, nil))
	assert.ErrorIs(t, err, errTipMoved)
	done, err := p.worker("supervisor").Integrate(context.Background(), 0)
	assert.NoError(t, err)
	assert.Empty(t, done)
}

// While the remote refused every push (a server hook), a worker's
// validation said the remote "cannot be reached" and to try again "when
// the remote answers": it answered, and said no. A refusal is named as
// one.
func TestQueueNamesARefusal(t *testing.T) {
	defer isolate()()
	p := newProject(t, state.Concurrent, task("task-001", "true"))
	bare := filepath.Join(t.TempDir(), "remote.git")
	p.sh("git init -q --bare " + bare + " && git remote add origin " + bare)
	p.write("refuse", "#!/bin/sh\necho 'pushes are refused for a while' >&2\nexit 1\n")
	p.sh("mv refuse " + bare + "/hooks/pre-receive && chmod 755 " + bare + "/hooks/pre-receive")
	require.NoError(t, remote.Save(p.dir, remote.Config{Remote: "origin", Machine: "m1", Clone: "aaaaaa"}))
	tk := p.task("task-001")
	tk.Status, tk.ClaimedBy, tk.Generation, tk.StartedAtCommit = state.InProgress, "m1-w1", 1, p.base

	_, err := p.worker("m1-w1").queue(tk, Tree{Top: p.dir, Dir: p.dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the job's remote origin refused task-001's commit")
	assert.NotContains(t, err.Error(), "cannot be reached")
}

// A queued task of a machine that is gone is integrated by another one,
// from its commit on the remote's queue ref, fetched with the state.
func TestIntegrateTakesOverAQueuedTaskFromTheRemote(t *testing.T) {
	defer isolate()()
	p := newProject(t, state.Concurrent, task("task-001", "test -f done.txt"))
	branch, bare := p.sharedBranch()
	other := filepath.Join(t.TempDir(), "m2")
	shIn(t, filepath.Dir(other), "git clone -q "+bare+" m2")
	queued := shIn(t, other, "echo work > done.txt && git add done.txt && git commit -q -m 'task-001: Title of task-001' && git push -q origin HEAD:refs/harness/queued/task-001/g1 && git rev-parse HEAD")
	require.NoError(t, remote.Save(p.dir, remote.Config{Remote: "origin", Machine: "m1", Clone: "aaaaaa"}))
	_, err := state.Update(p.dir, func(s *state.State) error {
		tk := s.Task("task-001")
		tk.Status, tk.ClaimedBy, tk.ClaimedClone, tk.Generation = state.InProgress, "m2-w1", "bbbbbb", 1
		tk.StartedAtCommit, tk.ValidatedCommit, tk.ValidatedAt = p.base, queued, "2026-01-01T00:00:00Z"
		return nil
	})
	require.NoError(t, err)
	require.False(t, git.CommitExists(p.dir, queued))

	done, err := p.worker("supervisor").Integrate(context.Background(), 0)
	require.NoError(t, err)
	require.Len(t, done, 1)
	assert.Nil(t, done[0].Failure)
	assert.Equal(t, state.Completed, p.task("task-001").Status)
	assert.Equal(t, "work", shIn(t, p.dir, "git --git-dir="+bare+" show "+branch+":done.txt"))
}

// sharedBranch makes the project's current branch its integration branch
// and pushes it to a new bare repository, origin; it returns the branch
// and the bare repository's path.
func (p *repo) sharedBranch() (branch, bare string) {
	p.t.Helper()
	branch = git.CurrentBranch(p.dir)
	_, err := state.Update(p.dir, func(s *state.State) error {
		s.SetConfig("integration_branch", branch)
		return nil
	})
	require.NoError(p.t, err)
	bare = filepath.Join(p.t.TempDir(), "remote.git")
	p.sh("git init -q --bare " + bare + " && git remote add origin " + bare + " && git push -q origin HEAD:" + branch)
	return branch, bare
}
