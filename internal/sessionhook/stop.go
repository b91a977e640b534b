package sessionhook

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// Stop decides whether the agent may end its turn. While work it may do
// remains, it blocks with the exact next command; a safety valve lets the
// stop through after a few blocks without progress. When the work is done it
// re-runs the validation of the tasks completed in this session, deactivates
// the harness and asks for a few rounds of self-reflection.
//
// It runs at every turn end, so the decision to block is made on the cached
// summary of the state; the tasks file is parsed only once no work remains.
func Stop(p hook.Payload) hook.Decision {
	c, ok := locate(p)
	if !ok {
		return hook.Decision{}
	}
	rt := ReadRuntime(c.Record(), c.session)
	// Switched off, its clean check is kept for the next turn's end.
	fence := integrity.TurnEnd(c.Project, "a writer outside the harness", !c.Active())
	if !c.Active() {
		return reflection(c, rt)
	}
	if c.Cancelled() {
		return hook.Decision{}
	}
	d := stopChecked(c, rt)
	if fence.Tampered() {
		d = withNote(d, fence.Message())
	}
	// A finding about the wiring is told once, when first made (the
	// person then sees it in `harness status`).
	if note, fresh := c.wiringNote(func() int { return sessionOf(c, rt) }); fresh {
		d = withNote(d, note)
	}
	return d
}

// sessionOf is the session's number: its runtime file's, else the log's
// last.
func sessionOf(c *call, rt *Runtime) int {
	if rt != nil && rt.Session > 0 {
		return rt.Session
	}
	return progress.LastSession(c.Root)
}

// stopChecked is Stop once the harness files are as the harness wrote them.
func stopChecked(c *call, rt *Runtime) hook.Decision {
	if rt.toldToStayOut() {
		return hook.Decision{} // told at SessionStart to leave the harness alone: see stayOut
	}
	if c.Paused() {
		// A person's pause: the session ends at this turn's end, its
		// claim kept for when the run resumes.
		return hook.Decision{Kind: hook.Allow, Warning: "harness: the run is paused (`harness resume` continues it); the session may stop, claims are kept"}
	}
	sum, err := c.Summary()
	if err != nil {
		return unreadable(c, err)
	}
	if stayOut(c, rt, sum.Concurrent) {
		return hook.Decision{} // that session owns the harness; this one was told to stay out
	}
	if sum.FromBackup {
		// The tasks file is corrupt and the summary was read from its
		// backup. Restore it before deciding, so the decision and the
		// agent's next command read the same state, and say so.
		restored, note, err := restore(c)
		if err != nil {
			restored, note = sum, "WARN: harness-tasks.json is corrupt; the harness decided from harness-tasks.json.bak and could not restore it: "+oneLine(err)
		}
		return withNote(stopActive(c, rt, restored), note)
	}
	return stopActive(c, rt, sum)
}

// stopActive is Stop's decision for an active harness this session may work on.
func stopActive(c *call, rt *Runtime, sum *statecache.Summary) hook.Decision {
	n := sum.SessionCount
	if rt != nil {
		n = rt.Session
	} else {
		rt = &Runtime{SessionID: c.session, Session: n, Worker: c.workerID, LogOffset: -1}
	}
	story := readSessionLog(c.Root, rt, c.owner(sum, rt, n))
	story.addUnverified(c.Project)
	over, near := c.spend(n, sum)
	d := stopDecide(c, rt, n, sum, story, over)
	if near != "" {
		d = withNote(d, near)
	}
	return d
}

// stopDecide is stopActive's decision; over is the note of a spent budget
// ("" when none is).
func stopDecide(c *call, rt *Runtime, n int, sum *statecache.Summary, story sessionLog, over string) hook.Decision {

	// A limit ends the session, not the run: what the session completed is
	// still verified, so a regression is caught by the session that made
	// it. (The valve's allow skips the gate: it opens because the agent is
	// stuck, and a gate that blocked again would defeat it.)
	note := limitReached(sum, story, n)
	if note == "" {
		note = over
	}
	if note != "" {
		if gateDue(sum, rt, story) {
			s, err := state.Load(c.Root)
			if err != nil {
				return unreadable(c, err)
			}
			if d, blocked := gate(c, s, sum, rt, n, story); blocked {
				return d
			}
		}
		return allowStop(c, rt, n, sum.Stats, note)
	}
	if w := remaining(sum, c.now, c.ids()...); !w.empty() {
		if c.askedOnly() != "" {
			// The user asked about the job, not for work on it: the turn
			// that answered may end. `/harness run` (or any other request)
			// is what starts the loop.
			return allowStop(c, rt, n, sum.Stats, "")
		}
		if d, ok := c.stuck(rt, n, sum); ok {
			return d
		}
		if bg := c.p.Get("background_tasks"); bg.IsArray() && len(bg.Array()) > 0 {
			// Claude Code wakes the session when its background tasks end:
			// blocking now would only spin the loop while they run.
			return allowStop(c, rt, n, sum.Stats, fmt.Sprintf("harness: %d background task(s) still running will wake the session; the stop is allowed although work remains (%s)", len(bg.Array()), sum.Stats.Counts()))
		}
		return blockOrValve(c, rt, n, sum, workReason(sum, w))
	}

	// No work left for this session: from here on the full state is read.
	s, err := state.Load(c.Root)
	if err != nil {
		return unreadable(c, err)
	}
	if d, blocked := gate(c, s, sum, rt, n, story); blocked {
		return d
	}
	switch schedule.Explain(s.Tasks) {
	case schedule.AllDone, schedule.Blocked:
		return finish(c, s, rt, n)
	}
	return allowStop(c, rt, n, sum.Stats, "")
}

// limitReached returns the note for the user when the session may stop
// because of session_config's limits, "" when none is reached.
func limitReached(sum *statecache.Summary, story sessionLog, n int) string {
	if sum.Config.PastMaxSessions(sum.SessionCount) {
		return fmt.Sprintf("harness: session_config.max_sessions=%d reached; the session may stop", sum.Config.MaxSessions)
	}
	if max := sum.Config.MaxTasksPerSession; max > 0 && story.outcomes >= max {
		return fmt.Sprintf("harness: session_config.max_tasks_per_session=%d reached (%d task outcomes in SESSION-%d); the session may stop, the next one continues", max, story.outcomes, n)
	}
	return ""
}

// gateDue reports whether the verification gate has anything to do: it is
// on, this session completed tasks, and it has not passed on this state yet.
func gateDue(sum *statecache.Summary, rt *Runtime, story sessionLog) bool {
	return sum.Config.VerifyOnStop && len(story.completed) > 0 && (rt.Verified != sum.Fingerprint || story.unverified > 0)
}

// gate runs the verification gate when it is due, and remembers that it
// passed on this state. It reports the decision when it blocked.
func gate(c *call, s *state.State, sum *statecache.Summary, rt *Runtime, n int, story sessionLog) (hook.Decision, bool) {
	if !gateDue(sum, rt, story) {
		return hook.Decision{}, false
	}
	if d, blocked := verificationGate(c, s, rt, n, story.completed); blocked {
		return d, true
	}
	// A completion that entered the record while the gate's commands ran
	// (another process's, or one forged by a command) is checked now.
	c.Reread() // another process's write while the commands ran
	if more := newlyUnverified(c.Project, story.completed); len(more) > 0 {
		if now, err := state.Load(c.Root); err == nil {
			if d, blocked := verificationGate(c, now, rt, n, more); blocked {
				return d, true
			}
		}
	}
	rt.Verified = sum.Fingerprint
	return hook.Decision{}, false
}

// newlyUnverified lists the record's unverified completions not among
// seen.
func newlyUnverified(p *project.Project, seen []string) []string {
	m, ok := p.Mark()
	if !ok {
		return nil
	}
	var more []string
	for _, id := range m.Unverified {
		if !slices.Contains(seen, id) {
			more = append(more, id)
		}
	}
	return more
}

// restoredNote tells the model and the user that the tasks file was restored.
const restoredNote = "WARN: harness-tasks.json was corrupt and has been restored from harness-tasks.json.bak (the corrupt copy is kept beside it, a RECOVERY line is logged); check that recent work is recorded."

// restore restores a corrupt tasks file from its valid backup (state.Update
// does it, keeps the corrupt copy and logs a RECOVERY line) and returns the
// summary of the restored state and the note that says so.
func restore(c *call) (*statecache.Summary, string, error) {
	if _, err := statecache.Update(c.Root, func(*state.State) error { return nil }); err != nil {
		return nil, "", err
	}
	sum, err := statecache.Load(c.Root)
	return sum, restoredNote, err
}

// withNote adds note to d: before the reason of a block, as the warning of
// anything else.
func withNote(d hook.Decision, note string) hook.Decision {
	if d.Kind == hook.Block {
		d.Reason = note + "\n" + d.Reason
	}
	if d.Kind == hook.Silent {
		d.Kind = hook.Allow
	}
	if d.Warning != "" {
		note += "\n" + d.Warning
	}
	d.Warning = note
	return d
}

// blockOrValve blocks the stop with reason, unless the valve opens: then the
// stop is allowed with a warning that says why and what to check.
func blockOrValve(c *call, rt *Runtime, n int, sum *statecache.Summary, reason string) hook.Decision {
	limit := ValveLimit()
	if rt.Stop.Block(sum.Fingerprint, limit) {
		msg := fmt.Sprintf("harness stop valve opened: the stop was blocked %d times in a row without progress (%s unchanged), so it is allowed. Check the next task's validation command and dependencies (`harness status`), and whether the agent is stuck; a new session resumes the work.", limit, sum.Fingerprint)
		logWarn(c.Root, n, c.now, "%s", msg)
		rt.save(c.Record())
		logStats(c.Root, n, sum.Stats, c.now)
		return hook.Decision{Kind: hook.Allow, Warning: "WARN: " + msg}
	}
	rt.save(c.Record())
	return hook.Decision{Kind: hook.Block, Reason: fmt.Sprintf("%s\n(stop blocked %d of %d times without progress; then the harness lets the session stop)", reason, rt.Stop.Blocks, limit)}
}

// workReason tells the model that work remains and what to do next.
func workReason(sum *statecache.Summary, w work) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HARNESS: eligible work remains, do not stop yet. %s\n", sum.Stats.Counts())
	if w.next != nil {
		fmt.Fprintf(&b, "next=%s\n", describe(w.next.ID, w.next.Title))
	}
	fmt.Fprintf(&b, "do now: %s\n", nextStep(w, nil))
	b.WriteString("Then keep going, task after task (claim -> checkpoint -> validate), until no eligible task remains.")
	return b.String()
}

// allowStop lets the stop through, with a STATS line, and starts the valve's
// count afresh: the chain of blocks is over.
func allowStop(c *call, rt *Runtime, n int, st schedule.Stats, note string) hook.Decision {
	rt.Stop = Valve{}
	rt.save(c.Record())
	logStats(c.Root, n, st, c.now)
	return hook.Decision{Kind: hook.Allow, Warning: note}
}

// switchOff records the hooks off and removes the marker under the
// transaction lock, the record first. A check running meanwhile (another
// session's hook, a verb's) looks again under that lock before it
// repairs: without it, it found the marker gone and the record still on
// (and put the marker back, the finished run on again), or a verb's
// write found the marker still there and recorded the hooks on.
func switchOff(p *project.Project) {
	lock.InTx(p.Root, func() {
		p.Record().SetActive(false)
		os.Remove(marker(p.Root))
	})
}

// finish ends the run: the harness is deactivated, the final STATS logged,
// last_session set, the session lock released, and the self-reflection
// rounds begin.
func finish(c *call, s *state.State, rt *Runtime, n int) hook.Decision {
	switchOff(c.Project)
	entries := []progress.Entry{{Time: c.now, Session: n, Type: progress.Stats, Message: schedule.Count(s.Tasks).Line()}}
	if !s.Concurrent() && lock.Release(c.Root, lock.Self()) {
		entries = append(entries, progress.Entry{Time: c.now, Session: n, Type: progress.Lock, Message: "released"})
	}
	progress.Append(c.Root, entries...)
	statecache.Update(c.Root, func(s *state.State) error {
		s.LastSession = c.now.UTC().Format(time.RFC3339)
		return nil
	})
	rt.Stop = Valve{}
	rt.Finished = true
	rt.Ending = ending(s)
	rt.ReflectLimit = reflectLimit(s.Config.MaxReflectIterations)
	return reflection(c, rt)
}

// ending says how a finished run ended, in a phrase: the reflection must not
// call a run done whose tasks failed.
func ending(s *state.State) string {
	st := schedule.Count(s.Tasks)
	if st.Completed == st.Total {
		return "every harness task is done"
	}
	what := []string{fmt.Sprintf("%d of %d completed", st.Completed, st.Total)}
	if st.Failed > 0 {
		what = append(what, fmt.Sprintf("%d failed for good", st.Failed))
	}
	if left := st.Total - st.Completed - st.Failed; left > 0 {
		what = append(what, fmt.Sprintf("%d never ran, blocked by a failed dependency", left))
	}
	return "the harness run is over but NOT all done (" + strings.Join(what, ", ") + ")"
}

// unreadable is the Stop decision when the state cannot be read: block once
// with the way to recover it, allow (with a warning) when the stop was
// blocked already, so a file the harness cannot read never traps the agent.
func unreadable(c *call, err error) hook.Decision {
	var fe *failure.Error
	if !errors.As(err, &fe) {
		fe = failure.Wrap(failure.EnvSetup, err, "%v", err)
	}
	text := fe.Text()
	if c.p.Bool("stop_hook_active") {
		logWarn(c.Root, progress.LastSession(c.Root), c.now, "stop allowed although the harness state cannot be read (%s); fix it before the next session", fe.Message)
		return hook.Decision{Kind: hook.Allow, Warning: "WARN: harness state cannot be read and the stop was blocked once already: allowing it. " + fe.Error()}
	}
	return hook.Decision{Kind: hook.Block, Reason: "HARNESS: the state cannot be read, so the harness cannot tell whether work remains.\n" + text +
		"\nRecover it before stopping: the hint above says how, and it is the user's to run (a write of harness-tasks.json is refused to you; a valid harness-tasks.json.bak is restored automatically). Never write a fresh file over the job's state; if it cannot be restored, stop and tell the user."}
}
