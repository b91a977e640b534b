// Package sessionhook decides what the harness's session hooks do: SessionStart
// opens a session (lock, session count, recovery, context for the model),
// Stop keeps the agent working while work it may do remains, SubagentStop and
// TeammateIdle do the same for helpers, SessionEnd closes the session.
//
// Every hook is a no-op (a Silent decision) unless the state root holds
// .harness-active, with one exception: the session that finished the run and
// removed the marker still gets its self-reflection rounds at Stop, which it
// recognises from its runtime file. A finished run left over from an earlier
// session never triggers anything.
//
// Stop runs at every turn end, so the hooks read only what they need: the
// cached summary of the state (the tasks file is parsed only after it
// changed, or when the full state is needed to finish a run), the lines of
// the progress log this session wrote since the last Stop (or its tail), a
// few small files. They never read the whole log.
//
// What a hook must remember between invocations that is not task state (the
// safety valves' counts, the reflection rounds, where in the log the session
// began) is in the session's Runtime file.
package sessionhook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/taskcycle"
)

// call is one hook invocation: its payload, the state root it acts on and the
// identity of the session and worker that called it.
type call struct {
	*project.Project // the state root, opened once for the call
	p                hook.Payload
	dir              string // the payload's cwd, a directory ("" when it names none: hook.Payload.Cwd)
	session          string // Claude Code's session id ("" when unknown)
	workerID         string // HARNESS_WORKER_ID ("" when unset)
	now              time.Time
}

// locate finds the state root for p. ok is false when there is none.
//
// Where the harness works (switched on, or a record of the project's own
// that the hooks still judge by), the runtime directory is made the
// project's own before any step writes in it (root.OwnRuntimeDir); in a
// project it never ran in, the hooks touch nothing.
func locate(p hook.Payload) (c *call, ok bool) {
	dir := p.Cwd()
	pr := project.Find(dir)
	if pr == nil {
		return nil, false
	}
	if pr.Active() || pr.Recorded() {
		root.OwnRuntimeDir(pr.Root)
	}
	return &call{Project: pr, p: p, dir: dir, session: p.Session(), workerID: os.Getenv("HARNESS_WORKER_ID"), now: time.Now()}, true
}

// active is locate for hooks that do nothing unless the harness is switched on.
func active(p hook.Payload) (*call, bool) {
	c, ok := locate(p)
	if !ok || !c.Active() {
		return nil, false
	}
	return c, true
}

// cwd is where the session works: the payload's cwd, else the project
// directory, else the state root.
func (c *call) cwd() string {
	if c.dir != "" {
		return c.dir // (locate found it a directory)
	}
	if d := os.Getenv("CLAUDE_PROJECT_DIR"); d != "" {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return c.Root
}

// worker is the session as the harness command sees it: same identity, same
// work tree.
func (c *call) worker() *taskcycle.Worker { return taskcycle.In(c.Project, c.cwd()) }

// tree is where the session's git work happens and its validation commands
// run, exactly as for `harness validate`; the state root when there is no
// git work tree.
func (c *call) tree(s *state.State) taskcycle.Tree {
	if tr, err := c.worker().Tree(s); err == nil {
		return tr
	}
	return taskcycle.Tree{Top: c.Root, Dir: c.Root}
}

// otherSession returns the holder of the session lock when it is another live
// session: in exclusive mode that session owns the state and this one must
// leave it alone.
func otherSession(c *call, concurrent bool) (lock.Holder, bool) {
	if concurrent {
		return lock.Holder{}, false
	}
	h, alive, held := lock.Owner(c.Root)
	if !held || !alive || h.Same(lock.Self()) {
		return lock.Holder{}, false
	}
	return h, true
}

// stayOut reports whether this session must leave the harness alone: it was
// locked out at SessionStart (rt.Excluded), its start found the harness
// unable to run and told it to do no harness work (rt.Unusable), or
// another live session holds the session lock now (exclusive mode).
//
// A locked-out session stays out for its whole life, even once the owner
// has ended and the lock is free. Its role is decided once, at SessionStart,
// the one place the model is told it ("work on nothing harness-related");
// the alternative, Stop taking the free lock and then blocking, would make
// an owner of a session that was never counted, recovered or briefed, and
// order a model told to stay out to claim work. A new session (or /clear)
// gets the lock the normal way.
func stayOut(c *call, rt *Runtime, concurrent bool) bool {
	if rt.toldToStayOut() {
		return true
	}
	_, other := otherSession(c, concurrent)
	return other
}

// ids returns the identities this call's claims are recorded under: the
// harness command's worker id (HARNESS_WORKER_ID, else "session:<id>").
func (c *call) ids() []string { return []string{taskcycle.WorkerID()} }

// owner says which log lines of session n are this session's (see owner).
func (c *call) owner(sum *statecache.Summary, rt *Runtime, n int) owner {
	if !sum.Concurrent {
		return owner{n: n}
	}
	who := owner{n: n, worker: taskcycle.WorkerID()}
	if rt != nil {
		who.held = append(who.held, rt.Held...)
	}
	for _, cl := range sum.InProgress {
		if cl.ClaimedBy == who.worker {
			who.held = append(who.held, cl.ID)
		}
	}
	return who
}

// heldBy lists the tasks in progress claimed by worker.
func heldBy(sum *statecache.Summary, worker string) []string {
	var ids []string
	for _, cl := range sum.InProgress {
		if cl.ClaimedBy == worker {
			ids = append(ids, cl.ID)
		}
	}
	return ids
}

// owns reports whether a task in progress claimed by claimedBy belongs to the
// session identified by ids: in exclusive mode every one does (the session
// holds the lock), in concurrent mode the ones claimed under one of ids.
func owns(concurrent bool, claimedBy string, ids ...string) bool {
	if !concurrent {
		return true
	}
	for _, id := range ids {
		if id != "" && claimedBy == id {
			return true
		}
	}
	return false
}

// lapsed reports whether a claim's lease has ended: such work is anyone's to
// recover (concurrent mode).
func lapsed(leaseExpiresAt string, at time.Time) bool {
	t := state.Task{LeaseExpiresAt: leaseExpiresAt}
	return t.LeaseExpired(at)
}

// work is what a session may still do.
type work struct {
	own       []statecache.Claim // in progress, this session's
	abandoned []statecache.Claim // in progress under an expired lease
	next      *statecache.Brief  // the eligible task picked next
	// nextUnchecked: next has no validation command yet, so a claim of
	// it is refused until it is given one.
	nextUnchecked bool
	// concurrent: other workers claim too, so the advice is a plain
	// `harness claim`, which takes the next task apart from theirs.
	concurrent bool
}

func (w work) empty() bool { return len(w.own)+len(w.abandoned) == 0 && w.next == nil }

// upNext is the work of sum's next eligible task alone.
func upNext(sum *statecache.Summary) work {
	w := work{next: sum.Next}
	if t := sum.NextTask; t != nil && sum.Next != nil && t.ID == sum.Next.ID {
		w.nextUnchecked = strings.TrimSpace(t.Command) == ""
	}
	return w
}

// remaining lists the work the session identified by ids may do now.
func remaining(sum *statecache.Summary, at time.Time, ids ...string) work {
	w := upNext(sum)
	w.concurrent = sum.Concurrent
	for _, cl := range sum.InProgress {
		switch {
		case owns(sum.Concurrent, cl.ClaimedBy, ids...):
			w.own = append(w.own, cl)
		case lapsed(cl.LeaseExpiresAt, at):
			w.abandoned = append(w.abandoned, cl)
		}
	}
	return w
}

// logStats appends the protocol's STATS line for session n.
func logStats(dir string, n int, st schedule.Stats, at time.Time) {
	progress.Append(dir, progress.Entry{Time: at, Session: n, Type: progress.Stats, Message: st.Line()})
}

// logWarn appends a WARN line for session n.
func logWarn(dir string, n int, at time.Time, format string, args ...any) {
	progress.Append(dir, progress.Entry{Time: at, Session: n, Type: progress.Warn, Message: fmt.Sprintf(format, args...)})
}

// logSize returns the size of the progress log, 0 when it is missing.
func logSize(dir string) int64 {
	fi, err := os.Stat(progress.Path(dir))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// marker is the path of .harness-active.
func marker(dir string) string { return filepath.Join(dir, root.ActiveMarker) }

// describe renders a task for the model: "task-003: Add OAuth providers".
func describe(id, title string) string {
	if title == "" {
		return id
	}
	return id + ": " + clip(title, 200)
}
