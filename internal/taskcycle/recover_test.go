//go:build !windows

package taskcycle

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/recovery"
	"github.com/harness-agent/harness/internal/state"
)

// interrupted sets up a task claimed by a session that then died, after
// the given progress, and returns the worker of the session that recovers.
func interrupted(t *testing.T, progress func(p *repo, w *Worker)) (*repo, *Worker) {
	p := newProject(t, state.Exclusive, task("task-001", "test -f ok.txt"), task("task-002", "true"))
	old := p.worker("session:old")
	_, err := old.Claim("task-001")
	require.NoError(t, err)
	progress(p, old)
	return p, p.worker("session:new")
}

// Every row of the protocol's decision matrix, carried out.
func TestRecoverEveryRow(t *testing.T) {
	t.Parallel()
	type want struct {
		row       recovery.Row
		status    string
		attempts  int
		errorLog  string // last error_log entry
		action    string // prefix of the RECOVERY action
		files     map[string]bool
		newCommit bool // a commit was made for the uncommitted work
	}
	commit := func(p *repo, name string) {
		p.write(name, name+"\n")
		p.sh(fmt.Sprintf("git add %s && git commit -q -m 'task-001: %s'", name, name))
	}
	for _, tc := range []struct {
		name     string
		progress func(p *repo, w *Worker)
		resume   bool
		want     want
	}{
		{"no progress", func(p *repo, w *Worker) {},
			false, want{row: recovery.NoProgress, status: state.Failed, attempts: 1,
				errorLog: "[SESSION_TIMEOUT] No progress detected", action: "marked failed"}},
		{"checkpoints only", func(p *repo, w *Worker) { w.Checkpoint("task-001", 1, 2, "planned") },
			false, want{row: recovery.CheckpointsOnly, status: state.Failed, attempts: 1,
				errorLog: "[SESSION_TIMEOUT] Checkpointed work was lost (no changes since %s)", action: "marked failed"}},
		{"checkpoints only, resumed", func(p *repo, w *Worker) { w.Checkpoint("task-001", 1, 2, "planned") },
			true, want{row: recovery.CheckpointsOnly, status: state.InProgress, attempts: 0,
				action: "resumed at checkpoint 1/2, re-claimed by session:new"}},
		{"committed, passes", func(p *repo, w *Worker) { commit(p, "ok.txt") },
			false, want{row: recovery.CommittedOnly, status: state.Completed, action: "validated: PASS, marked completed",
				files: map[string]bool{"ok.txt": true}}},
		{"committed, fails", func(p *repo, w *Worker) { commit(p, "other.txt") },
			false, want{row: recovery.CommittedOnly, status: state.Failed, attempts: 1, errorLog: "[TEST_FAIL] exit status 1 (no output)",
				action: "validated: FAIL, rolled back to", files: map[string]bool{"other.txt": false}}},
		{"uncommitted, passes", func(p *repo, w *Worker) { p.write("ok.txt", "ok\n") },
			false, want{row: recovery.UncommittedOnly, status: state.Completed, action: "validated: PASS, marked completed",
				files: map[string]bool{"ok.txt": true}, newCommit: true}},
		{"uncommitted, fails", func(p *repo, w *Worker) { p.write("other.txt", "x\n"); p.write("src/app.txt", "v2\n") },
			false, want{row: recovery.UncommittedOnly, status: state.Failed, attempts: 1, errorLog: "[TEST_FAIL] exit status 1 (no output)",
				action: "validated: FAIL, rolled back to", files: map[string]bool{"other.txt": false}}},
		{"both, passes", func(p *repo, w *Worker) { commit(p, "a.txt"); p.write("ok.txt", "ok\n") },
			false, want{row: recovery.Both, status: state.Completed, action: "committed the uncommitted changes",
				files: map[string]bool{"ok.txt": true, "a.txt": true}, newCommit: true}},
		{"both, fails", func(p *repo, w *Worker) { commit(p, "a.txt"); p.write("b.txt", "b\n") },
			false, want{row: recovery.Both, status: state.Failed, attempts: 1, errorLog: "[TEST_FAIL] exit status 1 (no output)",
				action: "committed the uncommitted changes", files: map[string]bool{"a.txt": false, "b.txt": false}}},
		{"base missing", func(p *repo, w *Worker) {
			p.setJSON(p.base, "0123456789abcdef0123456789abcdef01234567")
			p.write("ok.txt", "ok\n")
		}, false, want{row: recovery.UncommittedOnly, status: state.Failed, attempts: 3,
			errorLog: "[TASK_EXEC] started_at_commit 0123456789abcdef0123456789abcdef01234567 missing", action: "marked failed at max_attempts",
			files: map[string]bool{"ok.txt": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, w := interrupted(t, tc.progress)
			opts := RecoverOptions{}
			if tc.resume {
				opts.Resume = "task-001"
			}
			got, err := w.Recover(ctx, opts)
			require.NoError(t, err)
			require.Len(t, got, 1)
			r := got[0]
			require.NoError(t, r.Err)
			assert.Equal(t, tc.want.row, r.Row, r.Facts.Summary())
			assert.Contains(t, r.Action, tc.want.action)
			tk := p.task("task-001")
			assert.Equal(t, tc.want.status, tk.Status)
			assert.Equal(t, tc.want.attempts, tk.Attempts)
			if tc.want.errorLog != "" {
				want := tc.want.errorLog
				if tc.want.row == recovery.CheckpointsOnly {
					want = fmt.Sprintf(want, git.Short(p.base))
				}
				require.NotEmpty(t, tk.ErrorLog)
				assert.Equal(t, want, tk.ErrorLog[len(tk.ErrorLog)-1])
			}
			for f, present := range tc.want.files {
				assert.Equal(t, present, p.exists(f), f)
			}
			if tc.want.status == state.Completed {
				assert.Equal(t, p.head(), r.Outcome.Commit)
				assert.Empty(t, p.sh("git status --porcelain"))
			}
			if tc.want.newCommit {
				assert.Contains(t, p.sh("git log -1 --format=%s"), "task-001: Title of task-001")
			}
			if tc.want.status == state.Failed && tc.want.row.NeedsValidation() && tc.want.attempts == 1 {
				assert.Equal(t, p.base, p.head(), "rolled back to started_at_commit")
				assert.Equal(t, "refs/harness/snapshots/task-001/1", r.Outcome.Failure.Snapshot)
			}
			if tc.resume {
				assert.Equal(t, "session:new", tk.ClaimedBy)
				assert.Equal(t, p.base, tk.StartedAtCommit)
			}
			assert.Contains(t, p.log(), fmt.Sprintf("RECOVERY [task-001] action=%q reason=%q", r.Action, r.Reason))

			// Idempotent: nothing left to do (a resumed task is this
			// session's own claim now).
			again, err := w.Recover(ctx, RecoverOptions{})
			require.NoError(t, err)
			for _, r := range again {
				assert.False(t, r.Done(), "%+v", r)
			}
		})
	}
}

func TestRecoverLeavesTasksItCannotDecide(t *testing.T) {
	t.Parallel()
	t.Run("missing validation command", func(t *testing.T) {
		t.Parallel()
		p := newProject(t, state.Exclusive, task("task-001", "placeholder-check"))
		_, err := p.worker("session:old").Claim("")
		require.NoError(t, err)
		p.setJSON(`"command": "placeholder-check"`, `"command": ""`)
		p.write("work.txt", "w\n")
		got, err := p.worker("session:new").Recover(ctx, RecoverOptions{})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, "ERROR [task-001] [CONFIG] Missing validation.command", got[0].Err.Error())
		assert.Equal(t, state.InProgress, p.task("task-001").Status)
		assert.True(t, p.exists("work.txt"))
	})
	t.Run("dry run and rows", func(t *testing.T) {
		t.Parallel()
		p, w := interrupted(t, func(p *repo, w *Worker) { p.write("ok.txt", "ok\n") })
		before := p.read("harness-tasks.json")
		got, err := w.Recover(ctx, RecoverOptions{DryRun: true})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Contains(t, got[0].Left, "dry run: would run validation.command with the changes present")
		got, err = w.Recover(ctx, RecoverOptions{Rows: []recovery.Row{recovery.NoProgress}})
		require.NoError(t, err)
		assert.Contains(t, got[0].Left, "left for `harness recover`")
		assert.Equal(t, before, p.read("harness-tasks.json"))
		assert.NotContains(t, p.log(), "RECOVERY")
	})
	t.Run("resume refused when there are changes", func(t *testing.T) {
		t.Parallel()
		p, w := interrupted(t, func(p *repo, w *Worker) { p.write("ok.txt", "ok\n") })
		got, err := w.Recover(ctx, RecoverOptions{Resume: "task-001"})
		require.NoError(t, err)
		assert.True(t, failure.Is(got[0].Err, failure.Usage))
		assert.Equal(t, state.InProgress, p.task("task-001").Status)
		_, err = w.Recover(ctx, RecoverOptions{Resume: "task-002"})
		assert.True(t, failure.Is(err, failure.Usage), "task-002 is not interrupted")
	})
	t.Run("this session's own live claim", func(t *testing.T) {
		t.Parallel()
		p := newProject(t, state.Exclusive, task("task-001", "true"))
		w := p.worker("session:me")
		_, err := w.Claim("")
		require.NoError(t, err)
		got, err := w.Recover(ctx, RecoverOptions{})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.False(t, got[0].Done())
		assert.Contains(t, got[0].Left, "claimed by this session")
		assert.Equal(t, state.InProgress, p.task("task-001").Status)
	})
}

// Concurrent mode: a worker recovers its own claims in its own tree and reaps
// other workers' expired claims without touching their work; live claims of
// others are not its business.
func TestRecoverConcurrent(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Concurrent, task("task-001", "true"), task("task-002", "true"), task("task-003", "true"))
	short := p.worker("w-short")
	short.Lease = time.Minute
	_, err := short.Claim("task-001")
	require.NoError(t, err)
	_, err = p.worker("w-live").Claim("task-002")
	require.NoError(t, err)
	_, err = p.worker("w-me").Claim("task-003")
	require.NoError(t, err)
	p.now = p.now.Add(5 * time.Minute)

	got, err := p.worker("w-me").Recover(ctx, RecoverOptions{})
	require.NoError(t, err)
	byID := map[string]Recovered{}
	for _, r := range got {
		byID[r.TaskID] = r
	}
	require.Len(t, byID, 2)
	assert.True(t, byID["task-001"].Expired)
	assert.Equal(t, state.Failed, p.task("task-001").Status)
	assert.Equal(t, []string{"[SESSION_TIMEOUT] Lease expired"}, p.task("task-001").ErrorLog)
	assert.Equal(t, recovery.NoProgress, byID["task-003"].Row)
	assert.Equal(t, state.Failed, p.task("task-003").Status)
	assert.Equal(t, state.InProgress, p.task("task-002").Status, "a live claim of another worker")
}
