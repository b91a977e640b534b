package integrity

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/lock"
)

// shortWaits makes judgeWait and lock.TxTimeout short for a test.
func shortWaits(t *testing.T, judge, tx time.Duration) {
	oldJudge, oldTx := judgeWait, lock.TxTimeout
	judgeWait, lock.TxTimeout = judge, tx
	t.Cleanup(func() { judgeWait, lock.TxTimeout = oldJudge, oldTx })
}

// A harness process holding the transaction lock (here this one, through
// another open of the file: its executable is in this process's directory)
// is a writer in flight: the judgement waits for it past judgeWait.
func TestJudgeLockWaitsForTheHarness(t *testing.T) {
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	root := t.TempDir()
	shortWaits(t, 50*time.Millisecond, 5*time.Second)
	unlock, err := lock.Tx(root)
	require.NoError(t, err)
	go func() {
		time.Sleep(400 * time.Millisecond)
		unlock()
	}()
	start := time.Now()
	var res Result
	release := judgeLock(root, &res)
	took := time.Since(start)
	release()
	assert.Empty(t, res.Unlocked)
	assert.GreaterOrEqual(t, took, 350*time.Millisecond, "it did not wait for the harness's writer")
}

// A harness process holding the lock past harnessWait is waited for no
// longer: the hook answers within Claude Code's limit on it, judging
// without the lock, rather than be killed there (which lets a
// PreToolUse's tool call through).
func TestJudgeLockStopsWaitingForTheHarness(t *testing.T) {
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	root := t.TempDir()
	shortWaits(t, 50*time.Millisecond, 10*time.Second)
	was := harnessWait
	harnessWait = 300 * time.Millisecond
	t.Cleanup(func() { harnessWait = was })
	unlock, err := lock.Tx(root)
	require.NoError(t, err)
	defer unlock()
	start := time.Now()
	var res Result
	judgeLock(root, &res)()
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, 250*time.Millisecond, "it did not wait for the harness's writer")
	assert.Less(t, took, 5*time.Second, "it waited past harnessWait")
	assert.Contains(t, res.Unlocked, "still held after")
}

// Another process holding the lock (the agent's `flock … sleep`) is waited
// for judgeWait alone: the judgement goes on without the lock, saying who
// holds it.
func TestJudgeLockJudgesPastAnotherHolder(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("needs flock (util-linux)")
	}
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	root := t.TempDir()
	lock.Prepare(root)
	holder := exec.Command("flock", "-o", lock.TxPath(root), "sleep", "30")
	require.NoError(t, holder.Start())
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	require.Eventually(t, func() bool {
		unlock, err := lock.File(lock.TxPath(root), 0)
		if err == nil {
			unlock() // not taken yet
		}
		return err != nil
	}, 5*time.Second, 10*time.Millisecond, "flock did not take the lock")
	shortWaits(t, 200*time.Millisecond, 5*time.Second)
	start := time.Now()
	var res Result
	judgeLock(root, &res)()
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Contains(t, res.Unlocked, "still held after 200ms (held by pid ")
	assert.Contains(t, res.Unlocked, ": flock -o ")
}
