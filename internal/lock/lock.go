// Package lock implements the two locks of the protocol for one state root.
//
// The session lock is the protocol's portable mkdir lock (docs/architecture.md
// "The session lock"), the shell snippet agents use with its directory moved
// out of the shared /tmp (see Dir): a directory Dir()/harness-<first 16 hex of sha256(root)>.lock
// holding a "pid" file. In exclusive mode one Claude Code session holds it for
// its whole life; the holder is the Claude Code process (CLAUDE_PID), and a
// "session" file beside "pid" names its session id, so any process of the
// same session (a hook, the agent's harness command) is recognised as the
// owner. A holder whose pid is dead is stale and is reclaimed atomically by
// renaming the directory away before removing it, exactly as the snippet does.
//
// The transaction lock serialises every read-modify-write of the state files,
// from any process, in every mode. It is an flock on a file beside the session
// lock: the kernel releases it when its holder dies, so a crashed writer can
// never wedge the others.
package lock

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/safefile"
)

// Dir is where lock files live: $HARNESS_LOCK_DIR when set, else a
// directory of the user's own, never a shared one: $XDG_RUNTIME_DIR/harness
// (per user, emptied at logout) when the system gives one, else
// $XDG_STATE_HOME/harness/locks (~/.local/state/harness/locks), and
// without a home a directory named after the user's id in the system's
// temporary directory. In /tmp, the seed's place, every user's and every
// sandboxed command's writes reach them (Claude Code's sandbox leaves /tmp
// writable), and they pile up for every project ever touched.
func Dir() string {
	if d := os.Getenv("HARNESS_LOCK_DIR"); d != "" {
		return d
	}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" && filepath.IsAbs(rt) {
		if fi, err := os.Stat(rt); err == nil && fi.IsDir() {
			return filepath.Join(rt, "harness")
		}
	}
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" || !filepath.IsAbs(state) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return filepath.Join(os.TempDir(), fmt.Sprintf("harness-locks-%d", os.Getuid()))
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "harness", "locks")
}

// Prepare makes root's transaction lock file exist, so that a process
// that may not write the lock directory (a verb inside Claude Code's
// sandbox, where the directory is read-only) can still take the lock: an
// flock needs only a file it can open. The hooks call it, outside the
// sandbox.
func Prepare(root string) {
	path := TxPath(root)
	if _, err := os.Stat(path); err == nil {
		return
	}
	if f, err := create(path); err == nil {
		f.Close()
	}
}

// create opens the lock file at path for writing, made with its
// directory when either is missing (a HARNESS_LOCK_DIR inside a tree that
// was cleaned, a runtime directory emptied at logout, its first use).
func create(path string) (*os.File, error) {
	f, err := openLock(path, os.O_RDWR|os.O_CREATE)
	if os.IsNotExist(err) && os.MkdirAll(filepath.Dir(path), 0o700) == nil {
		f, err = openLock(path, os.O_RDWR|os.O_CREATE)
	}
	return f, err
}

// Hash is the first 16 hex digits of sha256(root): the PWD_HASH of the shell
// snippet's lock name.
func Hash(root string) string {
	sum := digest.SHA256([]byte(root))
	return hex.EncodeToString(sum[:])[:16]
}

// SessionPath returns the session lock directory for root.
func SessionPath(root string) string {
	return filepath.Join(Dir(), "harness-"+Hash(root)+".lock")
}

// Holder identifies who holds the session lock.
type Holder struct {
	PID       int    // the holding process; for a Claude Code session, CLAUDE_PID
	SessionID string // CLAUDE_CODE_SESSION_ID, empty for shell holders
}

func (h Holder) String() string {
	if h.SessionID != "" {
		return fmt.Sprintf("pid=%d session=%s", h.PID, h.SessionID)
	}
	return fmt.Sprintf("pid=%d", h.PID)
}

// Same reports whether h and o are the same session: same session id when both
// have one, else the same pid.
func (h Holder) Same(o Holder) bool {
	if h.SessionID != "" && o.SessionID != "" {
		return h.SessionID == o.SessionID
	}
	return h.PID != 0 && h.PID == o.PID
}

// Includes reports whether the calling process, whose identity is self
// (Self), belongs to holder h's session: the same session (Same), or a
// holder pid that is an ancestor of this process, unless both carry session
// ids (those decide, as in Same). The second case is a shell agent that took
// the mkdir lock itself (`echo "$$" > "$LOCKDIR/pid"`) and then runs
// harness commands: they are its children, not another session.
func (h Holder) Includes(self Holder) bool {
	if h.Same(self) {
		return true
	}
	if h.SessionID != "" && self.SessionID != "" {
		return false
	}
	return isAncestor(h.PID)
}

// maxAncestors bounds the walk up the process tree.
const maxAncestors = 64

// isAncestor reports whether pid is the parent of this process or one of its
// ancestors, walking the ppid chain through /proc where there is one, else
// looking at the parent only.
func isAncestor(pid int) bool {
	if pid <= 1 {
		return false // init adopts orphans: it is everyone's ancestor
	}
	cur := os.Getppid()
	for i := 0; i < maxAncestors && cur > 1; i++ {
		if cur == pid {
			return true
		}
		next, ok := parentOf(cur)
		if !ok {
			return false
		}
		cur = next
	}
	return false
}

// parentOf reads the parent pid of pid from /proc/<pid>/stat: "pid (comm)
// state ppid …", comm possibly holding spaces and parentheses.
func parentOf(pid int) (int, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// Self returns the holder identity of the calling process: the Claude Code
// session it runs in when CLAUDE_PID is set, else the process itself.
func Self() Holder {
	h := Holder{SessionID: os.Getenv("CLAUDE_CODE_SESSION_ID")}
	if pid, err := strconv.Atoi(os.Getenv("CLAUDE_PID")); err == nil && pid > 0 {
		h.PID = pid
	} else {
		h.PID = os.Getpid()
	}
	return h
}

// Outcome says how Acquire went.
type Outcome int

const (
	Acquired    Outcome = iota // the lock was free and is now ours
	AlreadyOurs                // we (this session) held it already
	Reclaimed                  // a dead holder's lock was taken over
	Busy                       // another live holder has it
)

// Result is what Acquire found and did.
type Result struct {
	Outcome Outcome
	Holder  Holder // the current holder: us, or the live other one when Busy
	Stale   Holder // the dead holder that was reclaimed, when Reclaimed
}

// ErrContention is returned when another process raced us for the lock.
var ErrContention = errors.New("lock contention: another process took the session lock at the same moment")

// Acquire takes the session lock of root for self.
func Acquire(root string, self Holder) (Result, error) {
	dir := SessionPath(root)
	err := os.Mkdir(dir, 0o755)
	if os.IsNotExist(err) && os.MkdirAll(Dir(), 0o700) == nil {
		err = os.Mkdir(dir, 0o755) // the lock directory's first use
	}
	if err == nil {
		return Result{Outcome: Acquired, Holder: self}, writeHolder(dir, self)
	} else if !os.IsExist(err) {
		return Result{}, err
	}
	cur, readable := ReadHolder(dir)
	if readable && cur.Same(self) {
		return Result{Outcome: AlreadyOurs, Holder: cur}, nil
	}
	if readable && cur.PID == self.PID && self.PID > 1 && self.SessionID != "" {
		// The same Claude Code process under a new session id: /clear (or
		// a resume) started another session in it, and the old session's
		// SessionEnd may not have released the lock yet. A process runs one
		// session at a time, so the lock passes to the new one. (pid 1 is
		// never a Claude Code process: tests use it as "someone else".)
		if err := writeHolder(dir, self); err != nil {
			// The old session's SessionEnd released it meanwhile:
			// take it the ordinary way.
			return Acquire(root, self)
		}
		return Result{Outcome: AlreadyOurs, Holder: self}, nil
	}
	if readable && Alive(cur.PID) {
		return Result{Outcome: Busy, Holder: cur}, nil
	}
	if !readable && young(dir) {
		// Just created by someone who has not written its pid yet.
		return Result{Outcome: Busy, Holder: cur}, nil
	}
	stale := fmt.Sprintf("%s.stale.%d", dir, os.Getpid())
	if err := os.Rename(dir, stale); err != nil {
		return Result{}, ErrContention
	}
	os.RemoveAll(stale)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return Result{}, ErrContention
	}
	return Result{Outcome: Reclaimed, Holder: self, Stale: cur}, writeHolder(dir, self)
}

// Release removes the session lock of root if self holds it. It reports
// whether a lock was released.
func Release(root string, self Holder) bool {
	dir := SessionPath(root)
	cur, ok := ReadHolder(dir)
	if !ok || !cur.Same(self) {
		return false
	}
	// Move it aside, then look at whose it is: a new session of the same
	// process may have taken it over between the read and the move (see
	// Acquire), and its lock must be put back, not removed.
	aside := fmt.Sprintf("%s.release.%d", dir, os.Getpid())
	if os.Rename(dir, aside) != nil {
		return false
	}
	if h, ok := ReadHolder(aside); ok && !h.Same(self) {
		os.Rename(aside, dir)
		return false
	}
	return os.RemoveAll(aside) == nil
}

// Owner returns the current holder of root's session lock and whether it is
// alive. ok is false when nobody holds it.
func Owner(root string) (h Holder, alive, ok bool) {
	h, ok = ReadHolder(SessionPath(root))
	if !ok {
		return h, false, false
	}
	return h, Alive(h.PID), true
}

// ReadHolder reads the pid (and session id, when present) in a lock directory.
func ReadHolder(dir string) (Holder, bool) {
	data, err := safefile.ReadFile(filepath.Join(dir, "pid"), safefile.Small)
	if err != nil {
		return Holder{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return Holder{}, false
	}
	h := Holder{PID: pid}
	if sid, err := safefile.ReadFile(filepath.Join(dir, "session"), safefile.Small); err == nil {
		h.SessionID = strings.TrimSpace(string(sid))
	}
	return h, true
}

func writeHolder(dir string, h Holder) error {
	if h.SessionID != "" {
		if err := os.WriteFile(filepath.Join(dir, "session"), []byte(h.SessionID+"\n"), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(h.PID)+"\n"), 0o644)
}

// young reports whether dir was created in the last few seconds, which makes a
// missing pid file a race rather than a crash.
func young(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && time.Since(fi.ModTime()) < 5*time.Second
}

// Alive reports whether a process with this pid exists (kill -0 semantics
// on Unix: EPERM means it exists but is not ours; on Windows, a process
// handle that has not exited).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return alive(pid)
}

// TxPath is the file root's transaction lock takes. It outlives every
// transaction (removing it while another process waits on it would let
// two in at once); uninstalling the harness says where they are.
func TxPath(root string) string { return filepath.Join(Dir(), "harness-"+Hash(root)+".tx") }

// TxTimeout bounds how long a transaction waits for another one to finish.
var TxTimeout = 30 * time.Second

// Tx takes root's transaction lock, waiting up to TxTimeout, and returns the
// function that releases it.
func Tx(root string) (unlock func(), err error) { return File(TxPath(root), TxTimeout) }

// InTx runs fn holding root's transaction lock, and without it when the
// lock cannot be had (its directory unusable, a holder past TxTimeout):
// for writes that a lock keeps in step with the checks, which are not
// given up for it.
func InTx(root string, fn func()) {
	defer Best(TxPath(root), TxTimeout)()
	fn()
}

// Best takes the flock on path as File does, and where it cannot be had
// returns a release that does nothing: for writes a lock keeps in step,
// which are made late rather than not at all.
func Best(path string, timeout time.Duration) (unlock func()) {
	if unlock, err := File(path, timeout); err == nil {
		return unlock
	}
	return func() {}
}

// MergePath is the file the merge queue's lock takes: one integration at a
// time per state root, held across a rebase and its checks (minutes), so it
// is not the transaction lock, which every verb and hook takes for
// milliseconds.
func MergePath(root string) string { return filepath.Join(Dir(), "harness-"+Hash(root)+".merge") }

// Merge takes root's merge-queue lock, waiting up to wait, and returns the
// function that releases it. The lock is the kernel's (flock): a holder that
// dies releases it.
func Merge(root string, wait time.Duration) (unlock func(), err error) {
	return File(MergePath(root), wait)
}

// APIErrorPath is the file that orders the hooks recording one API error:
// StopFailure, and SessionEnd when Claude Code exits before StopFailure is
// done (it does not wait for that hook).
func APIErrorPath(root string) string {
	return filepath.Join(Dir(), "harness-"+Hash(root)+".api-error")
}

// APIError takes root's API-error lock, waiting up to wait, and returns the
// function that releases it. A holder killed mid-way releases it (flock).
func APIError(root string, wait time.Duration) (unlock func(), err error) {
	return File(APIErrorPath(root), wait)
}

// WorkersPath is the file root's supervisor lock takes.
func WorkersPath(root string) string { return filepath.Join(Dir(), "harness-"+Hash(root)+".workers") }

// Workers takes root's supervisor lock without waiting: one `harness
// workers` per job.
func Workers(root string) (unlock func(), err error) { return File(WorkersPath(root), 0) }

// WorkersRunning reports whether a `harness workers` holds root's
// supervisor lock now.
func WorkersRunning(root string) bool {
	f, err := os.OpenFile(WorkersPath(root), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := tryLock(f); err != nil {
		return busy(err)
	}
	funlock(f)
	return false
}

// release is the function that lets go of the lock held on f.
func release(f *os.File) func() {
	return func() {
		funlock(f)
		f.Close()
	}
}

// held is File's error when the lock was not had: err, unless it is only
// that another holds it.
func held(path string, timeout time.Duration, err error) error {
	if err != nil && !busy(err) {
		return err
	}
	if who := holder(path); who != "" {
		return fmt.Errorf("lock %s still held after %s (%s)", path, timeout, who)
	}
	return fmt.Errorf("lock %s still held after %s", path, timeout)
}

// File takes an exclusive flock on the file at path (made when missing),
// waiting up to timeout, and returns the function that releases it: for a
// lock that is not one state root's (the record's mark has its own).
func File(path string, timeout time.Duration) (unlock func(), err error) {
	f, err := create(path)
	if err != nil {
		// A directory this process may not write (the sandbox keeps it
		// read-only to the agent's commands): an existing lock file,
		// opened for reading, takes an flock all the same.
		if ro, rerr := openLock(path, os.O_RDONLY); rerr == nil {
			f, err = ro, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if err = tryLock(f); err == nil {
		return release(f), nil
	}
	if !busy(err) || timeout <= 0 {
		f.Close()
		return nil, held(path, timeout, err)
	}
	if abandoned.Load() >= maxAbandoned {
		return poll(f, path, timeout)
	}
	// Wait in the kernel, which wakes a waiter the moment the lock is let
	// go: one that polls between sleeps can miss every moment it is free
	// while another process takes it again and again, and give up.
	got := make(chan error, 1)
	go func() { got <- waitLock(f) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, err
		}
		return release(f), nil
	case <-timer.C:
		// The wait goes on without us: what it takes, it lets go.
		abandoned.Add(1)
		go func() {
			if <-got == nil {
				funlock(f)
			}
			f.Close()
			abandoned.Add(-1)
		}()
		return nil, held(path, timeout, nil)
	}
}

// abandoned counts the waits File gave up on that still wait in the
// kernel, each on a thread of its own: a holder stopped for good keeps
// them there. Past maxAbandoned (a long-lived process, a lock stuck for
// hours) File polls instead.
var abandoned atomic.Int32

const maxAbandoned = 4

// poll takes the lock on f by trying again and again until timeout.
func poll(f *os.File, path string, timeout time.Duration) (unlock func(), err error) {
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		err := tryLock(f)
		if err == nil {
			return release(f), nil
		}
		if !busy(err) || time.Now().After(deadline) {
			f.Close()
			return nil, held(path, timeout, err)
		}
		time.Sleep(wait)
		if wait < 20*time.Millisecond {
			wait *= 2
		}
	}
}
