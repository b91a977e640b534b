package lock

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedSnippet is the protocol's own shell lock, verbatim but for the final
// wait, so the test can hold it while the Go side looks.
const seedSnippet = `
ROOT="$PWD"
PWD_HASH="$(printf '%s' "$ROOT" | (shasum -a 256 2>/dev/null || sha256sum 2>/dev/null) | awk '{print $1}' | cut -c1-16)"
LOCKDIR="/tmp/harness-${PWD_HASH:-unknown}.lock"
if ! mkdir "$LOCKDIR" 2>/dev/null; then
  LOCK_PID=$(cat "$LOCKDIR/pid" 2>/dev/null)
  if [ -n "$LOCK_PID" ] && kill -0 "$LOCK_PID" 2>/dev/null; then
    echo "ERROR: Another harness session is active (pid=$LOCK_PID)"; exit 1
  fi
  STALE="$LOCKDIR.stale.$$"
  if mv "$LOCKDIR" "$STALE" 2>/dev/null; then
    rm -rf "$STALE"
    mkdir "$LOCKDIR" || { echo "ERROR: Lock contention"; exit 1; }
    echo "WARN: Removed stale lock${LOCK_PID:+ from pid=$LOCK_PID}"
  else
    echo "ERROR: Another agent reclaimed the lock"; exit 1
  fi
fi
echo "$$" > "$LOCKDIR/pid"
trap 'rm -rf "$LOCKDIR"' EXIT
echo LOCKED
[ -n "${HOLD:-}" ] && read -r _
exit 0
`

func realRoot(t *testing.T) string {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return dir
}

func TestHashMatchesSeed(t *testing.T) {
	root := realRoot(t)
	out, err := exec.Command("sh", "-c", `printf '%s' "$1" | sha256sum | cut -c1-16`, "sh", root).Output()
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(out)), Hash(root))
	t.Setenv("HARNESS_LOCK_DIR", "/tmp")
	assert.Equal(t, "/tmp/harness-"+Hash(root)+".lock", SessionPath(root))
}

// The lock directory is the user's own unless set: never the shared /tmp.
func TestDirIsTheUsers(t *testing.T) {
	home, runtime := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("HARNESS_LOCK_DIR", "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	assert.Equal(t, filepath.Join(runtime, "harness"), Dir())
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(runtime, "gone"))
	assert.Equal(t, filepath.Join(home, ".local", "state", "harness", "locks"), Dir())
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "st"))
	assert.Equal(t, filepath.Join(home, "st", "harness", "locks"), Dir())
	t.Setenv("HARNESS_LOCK_DIR", "/elsewhere")
	assert.Equal(t, "/elsewhere", Dir())

	// Made on first use, for the session lock and the transaction lock.
	t.Setenv("HARNESS_LOCK_DIR", "")
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	root := realRoot(t)
	res, err := Acquire(root, Holder{PID: os.Getpid()})
	require.NoError(t, err)
	assert.Equal(t, Acquired, res.Outcome)
	unlock, err := Tx(root)
	require.NoError(t, err)
	unlock()
	assert.DirExists(t, filepath.Join(runtime, "harness"))
}

// A process that may not write the lock directory (a verb in Claude Code's
// sandbox) takes the transaction lock on the file the hooks prepared, and
// it excludes the others like any.
func TestTxOnAReadOnlyDirectory(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes a read-only directory")
	}
	dir := t.TempDir()
	t.Setenv("HARNESS_LOCK_DIR", dir)
	root := realRoot(t)
	Prepare(root)
	require.NoError(t, os.Chmod(dir, 0o555))
	defer os.Chmod(dir, 0o755)
	unlock, err := Tx(root)
	require.NoError(t, err)
	old := TxTimeout
	TxTimeout = 50 * time.Millisecond
	defer func() { TxTimeout = old }()
	_, err = Tx(root)
	assert.Error(t, err, "held")
	unlock()
}

// The seed's shell snippet hard-codes /tmp: with HARNESS_LOCK_DIR=/tmp
// the harness and a shell agent using the snippet share one lock.
func TestInteropWithSeedSnippet(t *testing.T) {
	t.Setenv("HARNESS_LOCK_DIR", "/tmp")
	root := realRoot(t)
	defer os.RemoveAll(SessionPath(root))

	// Go holds it: the shell snippet refuses, naming our pid.
	me := Holder{PID: os.Getpid(), SessionID: "s1"}
	res, err := Acquire(root, me)
	require.NoError(t, err)
	require.Equal(t, Acquired, res.Outcome)
	cmd := exec.Command("bash", "-c", seedSnippet)
	cmd.Dir = root
	out, _ := cmd.CombinedOutput()
	assert.Contains(t, string(out), "ERROR: Another harness session is active (pid="+strconv.Itoa(os.Getpid())+")")
	require.True(t, Release(root, me))

	// The shell holds it: Go sees a live holder.
	sh := exec.Command("bash", "-c", seedSnippet)
	sh.Dir = root
	sh.Env = append(os.Environ(), "HOLD=1")
	stdin, _ := sh.StdinPipe()
	stdout, _ := sh.StdoutPipe()
	require.NoError(t, sh.Start())
	buf := make([]byte, 7)
	_, err = stdout.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "LOCKED\n", string(buf))
	res, err = Acquire(root, me)
	require.NoError(t, err)
	assert.Equal(t, Busy, res.Outcome)
	assert.Equal(t, sh.Process.Pid, res.Holder.PID)
	stdin.Close()
	require.NoError(t, sh.Wait())
	_, _, held := Owner(root)
	assert.False(t, held, "the snippet's trap removed the lock")
}

func TestStaleHolderReclaimed(t *testing.T) {
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	root := realRoot(t)
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	require.NoError(t, os.Mkdir(SessionPath(root), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(SessionPath(root), "pid"), []byte(strconv.Itoa(dead.Process.Pid)+"\n"), 0o644))

	me := Holder{PID: os.Getpid()}
	res, err := Acquire(root, me)
	require.NoError(t, err)
	assert.Equal(t, Reclaimed, res.Outcome)
	assert.Equal(t, dead.Process.Pid, res.Stale.PID)
	h, alive, ok := Owner(root)
	assert.True(t, ok && alive)
	assert.Equal(t, os.Getpid(), h.PID)
	leftovers, _ := filepath.Glob(SessionPath(root) + ".stale.*")
	assert.Empty(t, leftovers)
}

func TestSameSessionIsRecognised(t *testing.T) {
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	root := realRoot(t)
	owner := Holder{PID: os.Getpid(), SessionID: "abc"}
	_, err := Acquire(root, owner)
	require.NoError(t, err)
	tests := []struct {
		name string
		who  Holder
		want Outcome
	}{
		{"same session id", Holder{PID: os.Getpid(), SessionID: "abc"}, AlreadyOurs},
		{"no session id, same pid", Holder{PID: os.Getpid()}, AlreadyOurs},
		{"another session of another live pid", Holder{PID: 1, SessionID: "other"}, Busy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Acquire(root, tt.who)
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Outcome)
		})
	}
	assert.False(t, Release(root, Holder{PID: 1, SessionID: "other"}), "only the owner releases")
	assert.True(t, Release(root, owner))
}

// /clear starts a new session in the same Claude Code process: the new
// session takes the lock over, and the old one's late SessionEnd cannot
// release it any more.
func TestNewSessionOfTheSameProcessTakesOver(t *testing.T) {
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	root := realRoot(t)
	old := Holder{PID: os.Getpid(), SessionID: "before-clear"}
	_, err := Acquire(root, old)
	require.NoError(t, err)

	cleared := Holder{PID: os.Getpid(), SessionID: "after-clear"}
	res, err := Acquire(root, cleared)
	require.NoError(t, err)
	assert.Equal(t, AlreadyOurs, res.Outcome)
	h, alive, held := Owner(root)
	assert.True(t, held && alive)
	assert.Equal(t, cleared, h)
	assert.False(t, Release(root, old), "the old session no longer owns it")
	assert.True(t, Release(root, cleared))
}

func TestSelfPrefersClaudePID(t *testing.T) {
	t.Setenv("CLAUDE_PID", "4242")
	t.Setenv("CLAUDE_CODE_SESSION_ID", "sess")
	assert.Equal(t, Holder{PID: 4242, SessionID: "sess"}, Self())
	t.Setenv("CLAUDE_PID", "junk")
	assert.Equal(t, os.Getpid(), Self().PID)
}

func TestTxSerialises(t *testing.T) {
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	root := realRoot(t)
	var mu sync.Mutex
	inside, maxInside := 0, 0
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := Tx(root)
			require.NoError(t, err)
			mu.Lock()
			inside++
			maxInside = max(maxInside, inside)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			inside--
			mu.Unlock()
			unlock()
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, maxInside)
}

// A shell that took the seed's lock with its own pid runs harness commands
// as its children: they are its session. Another process is not, and two
// session ids decide by themselves.
func TestIncludesAncestors(t *testing.T) {
	parent := Holder{PID: os.Getppid()}
	assert.True(t, parent.Includes(Self()), "the parent holds it")
	child := exec.Command("sleep", "5")
	require.NoError(t, child.Start())
	defer child.Process.Kill()
	assert.False(t, Holder{PID: child.Process.Pid}.Includes(Self()), "a child is not an ancestor")
	assert.False(t, Holder{PID: 1}.Includes(Holder{PID: os.Getpid()}), "init is nobody's session")
	assert.False(t, Holder{PID: os.Getppid(), SessionID: "a"}.Includes(Holder{PID: os.Getpid(), SessionID: "b"}))
	assert.True(t, Holder{PID: os.Getppid(), SessionID: "a"}.Includes(Holder{PID: os.Getpid()}))
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		// The grandparent, through /proc.
		gp, ok := parentOf(os.Getppid())
		require.True(t, ok)
		if gp > 1 {
			assert.True(t, Holder{PID: gp}.Includes(Holder{PID: os.Getpid()}))
		}
	}
}

// InTx runs fn holding the transaction lock (another taker waits for it),
// and runs it all the same where the lock cannot be had.
func TestInTx(t *testing.T) {
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	root := t.TempDir()
	ran := false
	InTx(root, func() {
		ran = true
		_, err := File(TxPath(root), 0)
		assert.Error(t, err, "held while fn runs")
	})
	assert.True(t, ran)
	unlock, err := File(TxPath(root), 0)
	require.NoError(t, err, "released after")
	unlock()

	blocked := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(blocked, nil, 0o644))
	t.Setenv("HARNESS_LOCK_DIR", blocked) // not a directory: no lock file can be made
	ran = false
	InTx(root, func() { ran = true })
	assert.True(t, ran, "run without the lock")
}

// A writer that takes and lets go of a lock again and again (a hook in
// a loop, many tasks verified at once) leaves it free for moments too
// short for a waiter that polls between sleeps: File waits in the kernel,
// which hands the lock over when it is let go.
func TestFileWaitsOutABusyHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.lock")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if unlock, err := File(path, time.Second); err == nil {
				time.Sleep(200 * time.Microsecond)
				unlock()
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	for i := range 20 {
		unlock, err := File(path, 500*time.Millisecond)
		require.NoError(t, err, "attempt %d", i)
		unlock()
	}
}

// A wait File gives up on goes on in the kernel; when it then gets the
// lock it lets go at once, so the lock is free again for the next taker.
func TestFileGivenUpLetsGo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.lock")
	hold, err := File(path, 0)
	require.NoError(t, err)
	_, err = File(path, 20*time.Millisecond)
	require.ErrorContains(t, err, "still held after 20ms")
	_, err = File(path, 0)
	require.ErrorContains(t, err, "still held after 0s")
	hold()
	require.Eventually(t, func() bool { return abandoned.Load() == 0 }, 5*time.Second, time.Millisecond)
	unlock, err := File(path, 0)
	require.NoError(t, err, "the given-up wait let go")
	unlock()
}
