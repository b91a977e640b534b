package sessionhook

import (
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// endTxWait bounds how long SessionEnd waits for the transaction lock:
// Claude Code gives all SessionEnd hooks 1.5 s together.
const endTxWait = 300 * time.Millisecond

// SessionEnd closes the session: it releases the session lock when this
// session holds it, and when the session did anything it records
// last_session and a STATS line. A session that must stay out of the
// harness (see stayOut) touches nothing but its own runtime file: the state
// and the log belong to the session that owns the lock. It produces no
// output.
func SessionEnd(p hook.Payload) hook.Decision {
	c, ok := locate(p)
	if !ok {
		return hook.Decision{}
	}
	// Every transaction here waits within the hook's budget.
	saved := lock.TxTimeout
	lock.TxTimeout = endTxWait
	defer func() { lock.TxTimeout = saved }()
	rt := ReadRuntime(c.Record(), c.session)
	defer removeRuntime(c.Record(), c.session)
	// The session's account of the budget no longer changes: it joins the
	// ended sessions' sum, which a total reads in place of every file.
	defer budget.End(c.Record(), c.session)
	if rt != nil && rt.Excluded || anotherOwner(c) {
		return hook.Decision{}
	}
	released := lock.Release(c.Root, lock.Self())
	if !c.Active() {
		return hook.Decision{}
	}
	// Once per session, the log's whole text against the record's mirror
	// (the other hooks compare its recent part).
	integrity.WholeLog(c.Project, "a writer outside the harness")
	n := progress.LastSession(c.Root)
	if rt != nil {
		n = rt.Session
	}
	if kind, details, ok := transcriptAPIError(p.Str("transcript_path")); ok {
		// The session ended on an API error. Claude Code does not wait
		// for the StopFailure hook, and a run that exits at once (claude
		// -p) can end before it ran: the record, the log line and the
		// kept claim are made here when it did not make them.
		recordAPIError(c, rt, kind, details, true)
	}
	var entries []progress.Entry
	if didWork(c.Root, rt) {
		at := c.now.UTC().Format(time.RFC3339)
		// The one change is last_session: made in place when the cache
		// knows the file, without parsing the tasks (docs/perf.md).
		var stats string
		if sum, ok, _ := statecache.SetLastSession(c.Root, at); ok {
			stats = sum.Stats.Line()
		} else {
			s, err := statecache.Update(c.Root, func(s *state.State) error {
				s.LastSession = at
				return nil
			})
			if err != nil {
				// Busy or unwritable: last_session waits for the next
				// session, the STATS line need not.
				s, err = state.Load(c.Root)
			}
			if err == nil {
				stats = schedule.Count(s.Tasks).Line()
			}
		}
		if stats != "" {
			entries = append(entries, progress.Entry{Time: c.now, Session: n, Type: progress.Stats, Message: stats})
		}
	}
	if released {
		entries = append(entries, progress.Entry{Time: c.now, Session: n, Type: progress.Lock, Message: "released"})
	}
	progress.Append(c.Root, entries...)
	return hook.Decision{}
}

// anotherOwner reports whether another live session holds the session lock
// of an exclusive-mode harness. The state is read (its cached summary) only
// when someone else holds the lock: in concurrent mode a lock means nothing.
func anotherOwner(c *call) bool {
	if h, alive, held := lock.Owner(c.Root); !held || !alive || h.Same(lock.Self()) {
		return false
	}
	sum, err := statecache.Load(c.Root)
	_, other := otherSession(c, err == nil && sum.Concurrent)
	return other
}

// didWork reports whether the session logged anything since it began that a
// STATS line does not already sum up.
func didWork(dir string, rt *Runtime) bool {
	if rt != nil && rt.LogOffset >= 0 && logSize(dir) <= rt.LogOffset {
		return false
	}
	last, _ := progress.Tail(dir, 1)
	return len(last) == 1 && !strings.Contains(last[0], "] "+progress.Stats+" ")
}
