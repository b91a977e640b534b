// Package taskcycle carries out the protocol's task transitions: claim,
// checkpoint, validate, fail, recover, renew. It is the only code that moves
// a task between statuses, so the rules live in one place:
//
//   - every read-modify-write of the state happens under the transaction lock
//     (state.Update) and re-checks that the task is still the one the caller
//     acted on: another worker, a lease reaper or a recovery may have moved it
//     while a validation was running;
//   - the lock is never held while a validation command runs (it may take
//     minutes): read, run, then record;
//   - an outcome is recorded before the work tree is rolled back, and the
//     rollback never touches the harness's files, so the record survives;
//   - git work (commit, snapshot, rollback) happens in the worker's own work
//     tree, never in the state root's when they differ (concurrent mode).
package taskcycle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// DefaultLease is how long a claim stays valid without a renewal.
const DefaultLease = 1800 * time.Second

// DefaultCleanupTimeout bounds on_failure.cleanup.
const DefaultCleanupTimeout = 2 * time.Minute

// Worker is one agent doing tasks of one state root.
type Worker struct {
	ID    string        // recorded as claimed_by
	Root  string        // the state root
	Cwd   string        // where the worker runs; its git work tree is found from here
	Lease time.Duration // how far a claim or renewal pushes lease_expires_at
	Now   func() time.Time
	Self  lock.Holder // who this worker is to the session lock (exclusive mode)
	// CleanupTimeout bounds on_failure.cleanup after a failed attempt.
	CleanupTimeout time.Duration
	// Person is set when a person runs the worker's verbs (no Claude Code
	// session in the process or its ancestors, internal/invoker): a
	// validation they run passed in a process they trust, so it is not
	// left to the verification gate.
	Person bool

	// project is the state root opened once (Project), handed to the
	// fences around the project commands the worker runs.
	project *project.Project
}

// In is New for a caller that opened the project already (a hook): the
// worker's steps share its facts instead of reading them again.
func In(p *project.Project, cwd string) *Worker {
	w := New(p.Root, cwd)
	w.project = p
	return w
}

// Project is the worker's state root, opened once.
func (w *Worker) Project() *project.Project {
	if w.project == nil || w.project.Root != w.Root {
		w.project = project.Open(w.Root)
	}
	return w.project
}

// New returns the worker of the calling process for the state root, its
// identity and lease taken from the environment (WorkerID, LeaseFromEnv).
func New(stateRoot, cwd string) *Worker {
	return &Worker{ID: WorkerID(), Root: stateRoot, Cwd: cwd, Lease: LeaseFromEnv(), Now: time.Now, Self: lock.Self(),
		CleanupTimeout: DefaultCleanupTimeout}
}

// WorkerID is this process's stable worker identity: $HARNESS_WORKER_ID,
// else the Claude Code session ("session:<CLAUDE_CODE_SESSION_ID>"), else
// "<host>:<pid>" of the Claude Code process ($CLAUDE_PID) or of the shell the
// command was run from, so that successive commands of one terminal agree.
func WorkerID() string {
	if id := strings.TrimSpace(os.Getenv("HARNESS_WORKER_ID")); id != "" {
		return id
	}
	if sid := strings.TrimSpace(os.Getenv("CLAUDE_CODE_SESSION_ID")); sid != "" {
		return "session:" + sid
	}
	host, _ := os.Hostname()
	pid := os.Getppid()
	if p, err := strconv.Atoi(os.Getenv("CLAUDE_PID")); err == nil && p > 0 {
		pid = p
	}
	return fmt.Sprintf("%s:%d", host, pid)
}

// LeaseFromEnv is $HARNESS_LEASE_SECONDS (a whole number of seconds, 0
// allowed for tests), else DefaultLease.
func LeaseFromEnv() time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("HARNESS_LEASE_SECONDS"))); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	return DefaultLease
}

// Tree is where a worker's git work happens.
type Tree struct {
	Top string // the git work tree's top
	Dir string // where validation commands run: the state root's place in Top
}

// Tree finds the worker's work tree: the git top of Cwd. In exclusive mode,
// when Cwd is outside any repository, the state root's repository is used.
// Validation commands run in the state root when it lies inside the tree,
// else in the same relative place in the tree (a worker's worktree mirrors
// the state root's checkout), else at the top.
func (w *Worker) Tree(s *state.State) (Tree, error) {
	top, err := git.Toplevel(w.Cwd)
	if err != nil {
		if s.Concurrent() || !git.Available() {
			if fe := (*failure.Error)(nil); errors.As(err, &fe) && s.Concurrent() && git.Available() {
				err = fe.WithHint("in concurrent mode run harness from the worker's own git worktree (`git worktree add ../w1`), with HARNESS_STATE_ROOT pointing at the shared state")
			}
			return Tree{}, err
		}
		if top, err = git.Toplevel(w.Root); err != nil {
			return Tree{}, err
		}
	}
	tr := Tree{Top: top, Dir: top}
	if inside(top, w.Root) {
		tr.Dir = w.Root
	} else if rootTop, err := git.Top(w.Root); err == nil {
		if rel, err := filepath.Rel(rootTop, w.Root); err == nil && rel != "." {
			if fi, err := os.Stat(filepath.Join(top, rel)); err == nil && fi.IsDir() {
				tr.Dir = filepath.Join(top, rel)
			}
		}
	}
	return tr, nil
}

func inside(top, path string) bool {
	rel, err := filepath.Rel(top, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// checkSession refuses, in exclusive mode, when another live session holds
// the session lock. Nobody holding it is fine: the SessionStart hook takes
// it, and a human at a terminal may run the cycle by hand. A holder this
// process runs under (the shell that took the mkdir lock itself) is this
// session.
func (w *Worker) checkSession(s *state.State) error {
	if s.Concurrent() {
		return nil
	}
	h, alive, ok := lock.Owner(w.Root)
	if ok && alive && !h.Includes(w.Self) {
		return failure.New(failure.EnvSetup, "Another harness session is active (pid=%d)", h.PID).
			WithHint("in exclusive mode only the session holding the lock changes tasks; wait for it to end, or switch session_config.concurrency_mode to \"concurrent\" and give each worker its own git worktree")
	}
	return nil
}

// TaskError is a failure about one task, rendered the way the protocol logs
// it: "ERROR [task-id] [CATEGORY] message".
type TaskError struct {
	TaskID string
	Err    *failure.Error // category, message and hint
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("ERROR [%s] [%s] %s", e.TaskID, e.Err.Category, e.Err.Message)
}

// Unwrap gives callers the categorised failure.
func (e *TaskError) Unwrap() error { return e.Err }

// load reads the state and finds task id in it.
func (w *Worker) load(id string) (*state.State, *state.Task, error) {
	s, err := state.Load(w.Root)
	if err != nil {
		return nil, nil, err
	}
	t := s.Task(id)
	if t == nil {
		return s, nil, unknown(s, id)
	}
	return s, t, nil
}

func unknown(s *state.State, id string) error {
	return failure.New(failure.Config, "no task %q in %s", id, state.FileName).WithHint("%s", s.IDHint(id))
}

// own refuses a task this worker may not move: one not in progress, or, in
// concurrent mode, one claimed by another worker. In exclusive mode the
// session lock decides ownership (checkSession), not claimed_by, so a task
// survives its session being resumed under a new id.
func (w *Worker) own(s *state.State, t *state.Task) error {
	if t.Status != state.InProgress || t.Validated() {
		if s.Concurrent() {
			if err := w.fenced(s, t); err != nil {
				return err
			}
		}
		if t.Validated() {
			return failure.New(failure.Usage, "%s passed its validation and waits in the merge queue (commit %s)", t.ID, git.Short(t.ValidatedCommit)).
				WithHint("nothing to do: the merge queue integrates it (`harness status` shows it); claim the next task with `harness claim`")
		}
		hint := fmt.Sprintf("claim it first: harness claim %s", failure.ShellArg(t.ID))
		if t.Status == state.Completed {
			hint = "nothing to do: it is done"
		}
		return failure.New(failure.Usage, "%s is %s, not in_progress", t.ID, t.Status).WithHint("%s", hint)
	}
	if s.Concurrent() && t.ClaimedBy != w.ID {
		if err := w.fenced(s, t); err != nil {
			return err
		}
		return failure.New(failure.Usage, "%s is claimed by %s, not by this worker (%s)", t.ID, orNone(t.ClaimedBy), w.ID).
			WithHint("run it as the claiming worker (HARNESS_WORKER_ID=%s), or wait for its lease (until %s) to expire and claim it", failure.ShellArg(t.ClaimedBy), orNone(t.LeaseExpiresAt))
	}
	return nil
}

// sameClaim reports whether t is still the claim snapshot was taken from:
// in progress, same claimant, same base.
func sameClaim(t, snapshot *state.Task) bool {
	return t != nil && t.Status == state.InProgress && t.ClaimedBy == snapshot.ClaimedBy && t.StartedAtCommit == snapshot.StartedAtCommit &&
		t.Generation == snapshot.Generation
}

func changed(t *state.Task, id string) error {
	now := "gone"
	if t != nil {
		now = t.Status
		if t.ClaimedBy != "" {
			now += ", claimed by " + t.ClaimedBy
		}
	}
	return failure.New(failure.TaskExec, "%s changed while this command ran (now %s): nothing recorded", id, now).
		WithHint("run `harness status` to see who moved it; a lease that expired mid-task is reaped by other workers (renew it with `harness renew`)")
}

func orNone(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}

// orNull names an unset commit the way the state file shows it.
func orNull(hash string) string {
	if hash == "" {
		return "null"
	}
	return hash
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// logLocked appends entries to the progress log under the transaction lock.
func (w *Worker) logLocked(entries ...progress.Entry) error {
	unlock, err := lock.Tx(w.Root)
	if err != nil {
		return failure.Wrap(failure.EnvSetup, err, "%v", err)
	}
	defer unlock()
	return progress.Append(w.Root, entries...)
}

// ValidateDependencies applies the protocol's dependency validation to s
// (cycles, blocked propagation) and returns one ERROR entry per task it
// failed. Callers hold the transaction lock and append the entries.
func ValidateDependencies(s *state.State, now time.Time) []progress.Entry {
	marks := schedule.Validate(s.Tasks)
	schedule.Apply(s, marks, now)
	var entries []progress.Entry
	for _, m := range marks {
		entries = append(entries, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Error,
			TaskID: m.ID, Category: failure.Dependency, Message: m.Message})
	}
	return entries
}

// Stats sets last_session and appends the STATS line, as a session does when
// it ends.
func (w *Worker) Stats() (schedule.Stats, error) {
	var st schedule.Stats
	now := w.Now()
	_, err := statecache.Update(w.Root, func(s *state.State) error {
		st = schedule.Count(s.Tasks)
		s.LastSession = stamp(now)
		return progress.Append(w.Root, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Stats, Message: st.Line()})
	})
	return st, err
}
