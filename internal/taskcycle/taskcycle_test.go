//go:build !windows

package taskcycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/state"
)

var ctx = context.Background()

func TestClaimRecordsTheClaim(t *testing.T) {
	t.Parallel()
	low := task("task-001", "true")
	high := task("task-002", "true")
	high.Priority = "P0"
	p := newProject(t, state.Exclusive, low, high)
	w := p.worker("w1")
	w.Lease = 10 * time.Minute

	c, err := w.Claim("")
	require.NoError(t, err)
	require.True(t, c.Claimed())
	assert.Equal(t, "task-002", c.Task.ID, "P0 before P1")
	got := p.task("task-002")
	assert.Equal(t, state.InProgress, got.Status)
	assert.Equal(t, p.base, got.StartedAtCommit, "the full hash of HEAD")
	assert.Equal(t, "w1", got.ClaimedBy)
	assert.Equal(t, "2026-01-02T03:04:05Z", got.ClaimedAt)
	assert.Equal(t, "2026-01-02T03:14:05Z", got.LeaseExpiresAt)
	assert.Contains(t, p.log(), fmt.Sprintf("[SESSION-0] Starting [task-002] Title of task-002 (base=%s)\n", git.Short(p.base)))

	// Exclusive mode: one task at a time, whoever asks.
	_, err = p.worker("w2").Claim("")
	require.Error(t, err)
	assert.True(t, failure.Is(err, failure.Usage))
	assert.Contains(t, err.Error(), "task-002 is already in progress (claimed by w1)")
	assert.Contains(t, err.(*failure.Error).Hint, "harness validate task-002")
}

func TestClaimByIDSaysWhyNot(t *testing.T) {
	t.Parallel()
	dep := task("task-002", "true")
	dep.DependsOn = []string{"task-001"}
	done := task("task-003", "true")
	done.Status = state.Completed
	dead := task("task-004", "true")
	dead.Status, dead.Attempts = state.Failed, 3
	blocked := task("task-005", "true")
	blocked.Status, blocked.DependsOn, blocked.ErrorLog = state.Failed, []string{"task-004"}, []string{"[DEPENDENCY] Blocked by failed task-004"}
	p := newProject(t, state.Concurrent, task("task-001", "true"), dep, done, dead, blocked)
	w := p.worker("w1")
	for id, why := range map[string]string{
		"task-002": "task-002 waits on task-001 (pending)",
		"task-003": "task-003 is completed",
		"task-004": "task-004 failed permanently (3/3 attempts); a person reopens it with `harness retry task-004`",
		"task-005": "task-005 is blocked: [DEPENDENCY] Blocked by failed task-004; reopened now it would fail again (Blocked by failed task-004): " +
			"a person fixes its dependencies first (`harness edit task-005 --depends-on …`), then reopens it with `harness retry task-005`",
	} {
		c, err := w.Claim(id)
		require.NoError(t, err)
		assert.False(t, c.Claimed())
		assert.Equal(t, why, c.Why)
	}
	_, err := w.Claim("task-999")
	assert.True(t, failure.Is(err, failure.Config))

	c, err := w.Claim("task-001")
	require.NoError(t, err)
	require.True(t, c.Claimed())
	// Concurrent mode: another worker skips the claimed task and finds
	// nothing else eligible.
	c, err = p.worker("w2").Claim("")
	require.NoError(t, err)
	assert.False(t, c.Claimed())
	assert.Equal(t, "the remaining tasks wait on work in progress", c.Why)
	c, err = p.worker("w2").Claim("task-001")
	require.NoError(t, err)
	assert.Contains(t, c.Why, "task-001 is claimed by w1 until")
}

func TestClaimOutsideGitChangesNothing(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, state.Create(dir, time.Now()))
	_, err := state.Update(dir, func(s *state.State) error { s.AddTask(task("task-001", "true")); return nil })
	require.NoError(t, err)
	before, _ := os.ReadFile(state.Path(dir))
	_, err = New(dir, dir).Claim("")
	require.Error(t, err)
	assert.True(t, failure.Is(err, failure.EnvSetup))
	assert.Contains(t, err.Error(), "is not inside a git repository")
	after, _ := os.ReadFile(state.Path(dir))
	assert.Equal(t, string(before), string(after))
}

func TestClaimRefusesWhileAnotherSessionHoldsTheLock(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Exclusive, task("task-001", "true"))
	other := lock.Holder{PID: os.Getppid(), SessionID: "other-session"} // alive, not us
	_, err := lock.Acquire(p.dir, other)
	require.NoError(t, err)
	w := p.worker("w1")
	w.Self = lock.Holder{PID: os.Getpid(), SessionID: "this-session"}
	_, err = w.Claim("")
	require.Error(t, err)
	assert.Equal(t, fmt.Sprintf("ERROR [ENV_SETUP] Another harness session is active (pid=%d)", os.Getppid()), err.Error())
	assert.Equal(t, state.Pending, p.task("task-001").Status)

	// The holder itself may claim.
	w.Self = other
	c, err := w.Claim("")
	require.NoError(t, err)
	assert.True(t, c.Claimed())
}

func TestMaxTasksPerSession(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Exclusive, task("task-001", "true"), task("task-002", "true"), task("task-003", "true"))
	p.setJSON(`"max_tasks_per_session": 20`, `"max_tasks_per_session": 2`)
	w := p.worker("w1")
	for _, id := range []string{"task-001", "task-002"} {
		c, err := w.Claim("")
		require.NoError(t, err)
		require.Equal(t, id, c.Task.ID)
		_, err = w.Validate(ctx, id)
		require.NoError(t, err)
	}
	c, err := w.Claim("")
	require.NoError(t, err)
	assert.True(t, c.Stop)
	assert.Equal(t, 2, c.Count)
	assert.Contains(t, p.log(), "[SESSION-0] STATS tasks_total=3 completed=2 failed=0 pending=1")
	// A new session counts from zero.
	p.setJSON(`"session_count": 0`, `"session_count": 1`)
	c, err = w.Claim("")
	require.NoError(t, err)
	assert.Equal(t, "task-003", c.Task.ID)
}

// In concurrent mode every worker logs under the global session number, so
// the per-session count is this worker's claims: the LOCK line after each
// Starting line (the protocol's Starting line has no room for the worker),
// or a Starting line naming it, as older logs have.
func TestMaxTasksPerSessionConcurrentCountsThisWorker(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Concurrent, task("task-001", "true"), task("task-002", "true"), task("task-003", "true"))
	p.setJSON(`"max_tasks_per_session": 20`, `"max_tasks_per_session": 1`)
	w1, w2 := p.worker("w1"), p.worker("w2")
	c, err := w1.Claim("task-001")
	require.NoError(t, err)
	require.True(t, c.Claimed())
	base := git.Short(c.Base)
	assert.Regexp(t, `\] \[SESSION-0\] Starting \[task-001\] Title of task-001 \(base=`+base+`\)\n`+
		`\[[^]]+\] \[SESSION-0\] LOCK task-001 claimed \(lease_expires_at=\S+Z worker=w1\)\n`, p.log())
	c, err = w2.Claim("task-002")
	require.NoError(t, err)
	assert.True(t, c.Claimed(), "w1's claim is not w2's")
	_, err = w1.Validate(ctx, "task-001")
	require.NoError(t, err)
	c, err = w1.Claim("")
	require.NoError(t, err)
	assert.True(t, c.Stop)
	assert.Equal(t, 1, c.Count)

	p.write(progress.FileName, p.log()+"[2026-01-02T03:04:05Z] [SESSION-0] Starting [task-009] Old (base=abc1234 worker=w3)\n")
	c, err = p.worker("w3").Claim("")
	require.NoError(t, err)
	assert.True(t, c.Stop, "an older log's Starting line names its worker")
}

func TestExpiredLeaseIsReapedByTheNextClaim(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Concurrent, task("task-001", "true"), task("task-002", "true"))
	w1 := p.worker("w1")
	w1.Lease = time.Minute
	_, err := w1.Claim("task-001")
	require.NoError(t, err)
	p.now = p.now.Add(2 * time.Minute)
	c, err := p.worker("w2").Claim("")
	require.NoError(t, err)
	assert.Equal(t, "task-002", c.Task.ID, "task-001 failed now; pending task-002 comes first")
	got := p.task("task-001")
	assert.Equal(t, state.Failed, got.Status)
	assert.Equal(t, 1, got.Attempts)
	assert.Equal(t, []string{"[SESSION_TIMEOUT] Lease expired"}, got.ErrorLog)
	assert.Empty(t, got.ClaimedBy)
	assert.Contains(t, p.log(), `RECOVERY [task-001] action="marked failed [SESSION_TIMEOUT] Lease expired" reason="lease of w1 expired at 2026-01-02T03:05:05Z"`)

	// The reaped worker's validation is refused: the task is no longer its.
	_, err = w1.Validate(ctx, "task-001")
	assert.True(t, failure.Is(err, failure.Usage))
}

func TestCheckpointAndRenew(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Concurrent, task("task-001", "true"))
	w := p.worker("w1")
	w.Lease = time.Minute
	_, err := w.Claim("")
	require.NoError(t, err)
	p.now = p.now.Add(30 * time.Second)
	tk, err := w.Checkpoint("task-001", 1, 3, `routes "added"`+"\nnext line")
	require.NoError(t, err)
	assert.Equal(t, "2026-01-02T03:05:35Z", tk.LeaseExpiresAt)
	got := p.task("task-001")
	require.Len(t, got.Checkpoints, 1)
	assert.Equal(t, state.Checkpoint{Step: 1, Total: 3, Description: `routes "added" next line`, Timestamp: "2026-01-02T03:04:35Z"}, got.Checkpoints[0])
	assert.Contains(t, p.log(), `CHECKPOINT [task-001] step=1/3 "routes 'added' next line"`)

	for _, bad := range [][2]int{{0, 3}, {4, 3}, {1, 0}} {
		_, err := w.Checkpoint("task-001", bad[0], bad[1], "x")
		assert.True(t, failure.Is(err, failure.Usage), "%v", bad)
	}
	_, err = p.worker("w2").Checkpoint("task-001", 2, 3, "not mine")
	assert.True(t, failure.Is(err, failure.Usage))

	// Heartbeat writes only once half the lease is gone.
	before := p.read("harness-tasks.json")
	p.now = p.now.Add(10 * time.Second)
	require.NoError(t, w.Heartbeat())
	assert.Equal(t, before, p.read("harness-tasks.json"), "not due: no write")
	p.now = p.now.Add(30 * time.Second)
	require.NoError(t, w.Heartbeat())
	assert.Equal(t, "2026-01-02T03:06:15Z", p.task("task-001").LeaseExpiresAt)

	renewed, err := w.Renew("")
	require.NoError(t, err)
	require.Len(t, renewed, 1)
	renewed, err = p.worker("w2").Renew("")
	require.NoError(t, err)
	assert.Empty(t, renewed, "w2 holds no claim")
	_, err = p.worker("w2").Renew("task-001")
	assert.True(t, failure.Is(err, failure.Usage))
}

func TestValidatePassCommitsAndCompletes(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Exclusive, task("task-001", "grep -q v2 src/app.txt && test -f src/new.txt"))
	w := p.worker("w1")
	_, err := w.Claim("")
	require.NoError(t, err)
	p.write("src/app.txt", "v2\n")
	p.write("src/new.txt", "new\n")
	o, err := w.Validate(ctx, "task-001")
	require.NoError(t, err)
	require.True(t, o.Completed)
	assert.True(t, o.NewCommit)
	assert.Equal(t, p.head(), o.Commit)
	assert.Equal(t, "task-001: Title of task-001", p.sh("git log -1 --format=%s"))
	assert.Equal(t, "src/app.txt\nsrc/new.txt", p.sh("git show --name-only --format= HEAD"))
	assert.Empty(t, p.sh("git status --porcelain"))
	got := p.task("task-001")
	assert.Equal(t, state.Completed, got.Status)
	assert.Equal(t, "2026-01-02T03:04:05Z", got.CompletedAt)
	assert.Empty(t, got.ClaimedBy+got.ClaimedAt+got.LeaseExpiresAt)
	assert.Contains(t, p.log(), fmt.Sprintf("Completed [task-001] (commit %s)\n", git.Short(o.Commit)))

	// Nothing to commit: the commit is HEAD.
	p2 := newProject(t, state.Exclusive, task("task-001", "true"))
	w2 := p2.worker("w1")
	_, err = w2.Claim("")
	require.NoError(t, err)
	o, err = w2.Validate(ctx, "task-001")
	require.NoError(t, err)
	assert.False(t, o.NewCommit)
	assert.Equal(t, p2.base, o.Commit)
}

// A failing validation is recorded first and then rolled back; the rollback
// reverts tracked and untracked work but never the harness files, even when
// they are tracked; the snapshot brings the attempt back.
func TestValidateFailRollsBackAndKeepsTheRecord(t *testing.T) {
	t.Parallel()
	tk := task("task-001", "echo 'running'; echo 'FAIL: TestApp: want v3, got v2' >&2; exit 1")
	tk.Cleanup = "echo cleaned > cleanup.out"
	p := newProject(t, state.Exclusive, tk)
	// Track the state files, the case where a plain `git reset --hard`
	// would revert the failure just recorded.
	p.write(".git/info/exclude", "")
	p.sh("git add -A && git commit -q -m 'track harness files'")
	p.write(".git/info/exclude", "cleanup.out\n")
	w := p.worker("w1")
	c, err := w.Claim("")
	require.NoError(t, err)
	base := c.Base
	p.write("src/app.txt", "v2\n")
	p.sh("git commit -qam 'task-001: half way'")
	p.write("src/app.txt", "v2 more\n")
	p.write("src/untracked.txt", "u\n")
	p.write("newdir/x.txt", "x\n")

	o, err := w.Validate(ctx, "task-001")
	require.NoError(t, err)
	require.False(t, o.Completed)
	f := o.Failure
	assert.Equal(t, "TEST_FAIL", f.Category)
	assert.Equal(t, "FAIL: TestApp: want v3, got v2", f.Message)
	assert.Equal(t, 1, o.Check.ExitCode)
	assert.True(t, f.RolledBack)
	assert.False(t, f.Permanent)
	assert.Equal(t, "refs/harness/snapshots/task-001/1", f.Snapshot)
	require.NotNil(t, f.Cleanup)
	assert.Equal(t, "cleaned\n", p.read("cleanup.out"))

	assert.Equal(t, base, p.head())
	assert.Equal(t, "v1\n", p.read("src/app.txt"))
	assert.False(t, p.exists("src/untracked.txt"))
	assert.False(t, p.exists("newdir"))
	got := p.task("task-001")
	assert.Equal(t, state.Failed, got.Status, "the tracked state file was not reverted")
	assert.Equal(t, 1, got.Attempts)
	assert.Equal(t, []string{"[TEST_FAIL] FAIL: TestApp: want v3, got v2"}, got.ErrorLog)
	assert.Equal(t, "2026-01-02T03:04:05Z", got.FailedAt)
	assert.Empty(t, got.ClaimedBy)
	log := p.log()
	assert.Contains(t, log, "ERROR [task-001] [TEST_FAIL] FAIL: TestApp: want v3, got v2\n")
	assert.Contains(t, log, fmt.Sprintf("ROLLBACK [task-001] git reset --hard %s\n", git.Short(base)), "the protocol's line exactly")
	assert.True(t, strings.Index(log, "ERROR [task-001]") < strings.Index(log, "ROLLBACK [task-001]"))

	// Restore the attempt with the documented command.
	p.sh(git.RestoreCommand(p.dir, f.Snapshot))
	assert.Equal(t, "v2 more\n", p.read("src/app.txt"))
	assert.Equal(t, "u\n", p.read("src/untracked.txt"))
	assert.Equal(t, "x\n", p.read("newdir/x.txt"))
	assert.Equal(t, state.Failed, p.task("task-001").Status)

	// Retry: the second failure is snapshot 2; the third is permanent.
	for attempt := 2; attempt <= 3; attempt++ {
		_, err := w.Claim("task-001")
		require.NoError(t, err)
		o, err := w.Validate(ctx, "task-001")
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("refs/harness/snapshots/task-001/%d", attempt), o.Failure.Snapshot)
		assert.Equal(t, attempt == 3, o.Failure.Permanent)
	}
}

func TestValidateTimeoutKillsTheCommand(t *testing.T) {
	t.Parallel()
	tk := task("task-001", "sleep 30 & echo $! > sleeper.pid; wait")
	tk.TimeoutSeconds = 1
	p := newProject(t, state.Exclusive, tk)
	// Ignored, so the rollback's clean keeps it for the check below.
	p.write(".git/info/exclude", "/harness-tasks.json\n/harness-tasks.json.bak\n/harness-progress.txt\n/.harness-*\nsleeper.pid\n")
	w := p.worker("w1")
	_, err := w.Claim("")
	require.NoError(t, err)
	start := time.Now()
	o, err := w.Validate(ctx, "task-001")
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, "TIMEOUT", o.Failure.Category)
	assert.Equal(t, []string{"[TIMEOUT] validation exceeded 1s"}, p.task("task-001").ErrorLog)
	pid, err := strconv.Atoi(strings.TrimSpace(p.read("sleeper.pid")))
	require.NoError(t, err)
	assert.Eventually(t, func() bool {
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return syscall.Kill(pid, 0) != nil || strings.Contains(string(stat), ") Z ")
	}, 2*time.Second, 20*time.Millisecond, "the validation's child sleep must be killed")
}

func TestValidateWithoutACheckRecordsNothing(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Exclusive, task("task-001", "placeholder-check"), task("task-002", "no-such-tool-xyz run"))
	w := p.worker("w1")
	_, err := w.Claim("task-001")
	require.NoError(t, err)
	// A task without a check is never claimed; one whose check was removed
	// by hand while in progress is refused at validate.
	p.setJSON(`"command": "placeholder-check"`, `"command": ""`)
	_, err = w.Validate(ctx, "task-001")
	require.Error(t, err)
	assert.Equal(t, "ERROR [task-001] [CONFIG] Missing validation.command", err.Error())
	assert.Contains(t, p.log(), "ERROR [task-001] [CONFIG] Missing validation.command\n")
	assert.Equal(t, state.InProgress, p.task("task-001").Status)
	assert.Equal(t, 0, p.task("task-001").Attempts)

	_, err = w.Fail(ctx, "task-001", failure.Config, "no check defined")
	require.NoError(t, err)
	_, err = w.Claim("task-002")
	require.NoError(t, err)
	_, err = w.Validate(ctx, "task-002")
	require.Error(t, err)
	assert.True(t, failure.Is(err.(*TaskError).Err, failure.EnvSetup))
	assert.Contains(t, err.Error(), "ERROR [task-002] [ENV_SETUP] validation command not found: no-such-tool-xyz")
	assert.Equal(t, state.InProgress, p.task("task-002").Status)
	assert.Equal(t, 0, p.task("task-002").Attempts)
}

func TestFail(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Exclusive, task("task-001", "true"))
	w := p.worker("w1")
	_, err := w.Claim("")
	require.NoError(t, err)
	_, err = w.Fail(ctx, "task-001", "BOGUS", "x")
	assert.True(t, failure.Is(err, failure.Usage))
	p.write("scratch.txt", "s\n")
	o, err := w.Fail(ctx, "task-001", failure.TaskExec, "Redis connection refused")
	require.NoError(t, err)
	assert.True(t, o.Failure.RolledBack)
	assert.False(t, p.exists("scratch.txt"))
	assert.Equal(t, []string{"[TASK_EXEC] Redis connection refused"}, p.task("task-001").ErrorLog)
	assert.Contains(t, p.log(), "ERROR [task-001] [TASK_EXEC] Redis connection refused\n")
	_, err = w.Fail(ctx, "task-001", failure.TaskExec, "again")
	assert.True(t, failure.Is(err, failure.Usage), "no longer in progress")
}

func TestMissingBaseFailsAtMaxAttempts(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Exclusive, task("task-001", "false"))
	w := p.worker("w1")
	_, err := w.Claim("")
	require.NoError(t, err)
	p.setJSON(`"started_at_commit": "`+p.base+`"`, `"started_at_commit": "0123456789abcdef0123456789abcdef01234567"`)
	p.write("work.txt", "w\n")
	o, err := w.Validate(ctx, "task-001")
	require.NoError(t, err)
	got := p.task("task-001")
	assert.Equal(t, 3, got.Attempts)
	assert.True(t, o.Failure.Permanent)
	assert.True(t, o.Failure.BaseMissing)
	assert.False(t, o.Failure.RolledBack)
	assert.Contains(t, got.ErrorLog, "[TASK_EXEC] started_at_commit 0123456789abcdef0123456789abcdef01234567 missing")
	assert.True(t, p.exists("work.txt"), "no rollback to a missing commit")
	assert.NotEmpty(t, o.Failure.Snapshot, "the work is still saved")
}

// A validation that outlives its claim (reaped, failed by another) records
// nothing: the state is never overwritten by a stale result. The other
// writer's change is a legal one (a failed attempt with its error), so
// the fence around the command keeps it.
func TestValidateRechecksTheClaim(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Concurrent, task("task-001", "touch started; sleep 1"))
	w := p.worker("w1")
	_, err := w.Claim("")
	require.NoError(t, err)
	go func() {
		for !p.exists("started") {
			time.Sleep(10 * time.Millisecond)
		}
		state.Update(p.dir, func(s *state.State) error {
			t := s.Task("task-001")
			t.Status, t.ClaimedBy = state.Failed, ""
			t.ErrorLog = append(t.ErrorLog, "[SESSION_TIMEOUT] released by another session")
			return nil
		})
	}()
	_, err = w.Validate(ctx, "task-001")
	require.Error(t, err)
	assert.True(t, failure.Is(err, failure.TaskExec))
	assert.Contains(t, err.Error(), "task-001 changed while this command ran (now failed): nothing recorded")
	assert.Equal(t, 0, p.task("task-001").Attempts)
	assert.NotContains(t, p.log(), "Completed [task-001]")
}

// Concurrent workers each work in their own git worktree: commits and
// rollbacks happen there, never in the state root's checkout.
func TestConcurrentWorktrees(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Concurrent, task("task-001", "test -f one.txt"), task("task-002", "test -f two.txt"))
	trees := map[string]string{}
	for _, name := range []string{"w1", "w2"} {
		dir := filepath.Join(filepath.Dir(p.dir), filepath.Base(p.dir)+"-"+name)
		p.sh(fmt.Sprintf("git worktree add -q -b %s %s", name, dir))
		trees[name] = dir
	}
	worker := func(name string) *Worker {
		w := p.worker(name)
		w.Cwd = filepath.Join(trees[name], "src") // anywhere inside its tree
		return w
	}
	c1, err := worker("w1").Claim("")
	require.NoError(t, err)
	c2, err := worker("w2").Claim("")
	require.NoError(t, err)
	assert.Equal(t, "task-001", c1.Task.ID)
	assert.Equal(t, "task-002", c2.Task.ID)

	require.NoError(t, os.WriteFile(filepath.Join(trees["w1"], "one.txt"), []byte("1"), 0o644))
	o, err := worker("w1").Validate(ctx, "task-001")
	require.NoError(t, err)
	assert.True(t, o.Completed)
	assert.Equal(t, trees["w1"], o.Tree.Top)
	assert.Equal(t, "task-001: Title of task-001", shIn(t, trees["w1"], "git log -1 --format=%s w1"))
	assert.Equal(t, "baseline", p.sh("git log -1 --format=%s"), "the state root's branch is untouched")

	require.NoError(t, os.WriteFile(filepath.Join(trees["w2"], "wrong.txt"), []byte("2"), 0o644))
	p.write("main-scratch.txt", "the state root's own tree must not be cleaned\n")
	o, err = worker("w2").Validate(ctx, "task-002")
	require.NoError(t, err)
	assert.True(t, o.Failure.RolledBack)
	assert.NoFileExists(t, filepath.Join(trees["w2"], "wrong.txt"))
	assert.True(t, p.exists("main-scratch.txt"))
	assert.FileExists(t, filepath.Join(trees["w1"], "one.txt"))

	// The snapshot ref is shared by every worktree of the repository.
	snaps, err := git.Snapshots(p.dir, "task-002")
	require.NoError(t, err)
	require.Len(t, snaps, 1)

	// Outside any git tree, concurrent mode refuses rather than guessing.
	w := p.worker("w3")
	w.Cwd = t.TempDir()
	_, err = w.Claim("")
	assert.True(t, failure.Is(err, failure.EnvSetup))
}

func TestStats(t *testing.T) {
	t.Parallel()
	done := task("task-001", "true")
	done.Status = state.Completed
	p := newProject(t, state.Exclusive, done, task("task-002", "true"))
	st, err := p.worker("w1").Stats()
	require.NoError(t, err)
	assert.Equal(t, "tasks_total=2 completed=1 failed=0 pending=1 blocked=0 attempts_total=0 checkpoints=0", st.Line())
	assert.Contains(t, p.log(), "[SESSION-0] STATS tasks_total=2 completed=1")
	s, _ := state.Load(p.dir)
	assert.Equal(t, "2026-01-02T03:04:05Z", s.LastSession)
}

func TestWorkerID(t *testing.T) {
	host, _ := os.Hostname()
	assert.Equal(t, fmt.Sprintf("%s:%d", host, os.Getppid()), WorkerID())
	t.Setenv("CLAUDE_PID", "4242")
	assert.Equal(t, host+":4242", WorkerID())
	t.Setenv("CLAUDE_CODE_SESSION_ID", "abc")
	assert.Equal(t, "session:abc", WorkerID())
	t.Setenv("HARNESS_WORKER_ID", "w7")
	assert.Equal(t, "w7", WorkerID())
	assert.Equal(t, DefaultLease, LeaseFromEnv())
	t.Setenv("HARNESS_LEASE_SECONDS", "60")
	assert.Equal(t, time.Minute, LeaseFromEnv())
}

// on_failure.cleanup runs after the rollback, bounded in time; its failure is
// a WARN line, never a reason to lose the recorded outcome.
func TestCleanupIsBounded(t *testing.T) {
	t.Parallel()
	tk := task("task-001", "false")
	tk.Cleanup = "echo cleaning; sleep 30"
	p := newProject(t, state.Exclusive, tk)
	w := p.worker("w1")
	w.CleanupTimeout = 300 * time.Millisecond
	_, err := w.Claim("")
	require.NoError(t, err)
	start := time.Now()
	o, err := w.Validate(ctx, "task-001")
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	require.NotNil(t, o.Failure.Cleanup)
	assert.Equal(t, "TIMEOUT", o.Failure.Cleanup.Outcome.String())
	assert.Contains(t, p.log(), "WARN [task-001] on_failure.cleanup TIMEOUT: killed after the 300ms time limit")
	assert.Equal(t, state.Failed, p.task("task-001").Status)
}
