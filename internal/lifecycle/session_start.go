package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/recovery"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/validation"
)

// SessionStart sources, as Claude Code names them.
const (
	sourceStartup = "startup"
	sourceCompact = "compact"
)

// opening is what SessionStart did to the state, for the context and the log.
type opening struct {
	n         int  // the session's number
	overLimit bool // max_sessions reached: the session must not work
	recovered []string
	toRecover []string
	blocked   []schedule.Mark
	entries   []progress.Entry
}

// SessionStart opens a session of an active harness: it takes the session
// lock (exclusive mode), counts the session, recovers interrupted work,
// validates dependencies, runs harness-init.sh and tells the model in one
// short block where the job stands and what to do next. On source "compact"
// the session continues: nothing is counted or recovered, the context is
// given again.
func SessionStart(p hook.Payload) hook.Decision {
	c, ok := active(p)
	if !ok {
		return hook.Decision{}
	}
	source := p.Str("source")
	switch source {
	case "startup", "resume", "clear", "compact", "fork":
	default:
		source = sourceStartup
	}
	s, err := state.Load(c.root)
	if err != nil {
		return unusable(c, err)
	}
	restored := s.FromBackup

	var held *lock.Result // nil in concurrent mode: no session lock
	if !s.Concurrent() {
		res, err := lock.Acquire(c.root, lock.Self())
		held = &res
		switch {
		case errors.Is(err, lock.ErrContention):
			res = lock.Result{Outcome: lock.Busy}
		case err != nil:
			return hook.Decision{Kind: hook.Allow, Context: fmt.Sprintf(
				"ERROR [%s] cannot take the harness session lock %s: %v\nhint: make %s writable (or set HARNESS_LOCK_DIR), then start a new session. Until then do no harness work in this session.",
				failure.EnvSetup, lock.SessionPath(c.root), err, lock.Dir())}
		}
		if held.Outcome == lock.Busy {
			return busy(held.Holder)
		}
	}

	rt := ReadRuntime(c.root, c.session)
	compact := source == sourceCompact
	var o opening
	s, err = state.Update(c.root, func(s *state.State) error {
		o = open(c, s, source, rt, held)
		return nil
	})
	if err != nil {
		return unusable(c, err)
	}
	progress.Append(c.root, o.entries...)

	var env string
	if !compact && !o.overLimit {
		env = healthCheck(c.root, o.n, c.now)
	}
	if !compact || rt == nil {
		rt = &Runtime{SessionID: c.session, Session: o.n, Source: source, Worker: c.worker,
			StartedAt: c.now.UTC().Format(time.RFC3339)}
	}
	rt.LogOffset = logSize(c.root)
	rt.save(c.root)
	if !compact {
		pruneRuntimes(c.root, c.now)
	}
	return hook.Decision{Kind: hook.Allow, Context: startContext(c, s, source, o, env, restored, held)}
}

// open does SessionStart's work on the state, under the transaction lock.
func open(c *call, s *state.State, source string, rt *Runtime, held *lock.Result) opening {
	var o opening
	at := c.now
	entry := func(typ, id, cat, msg string) {
		o.entries = append(o.entries, progress.Entry{Time: at, Session: o.n, Type: typ, TaskID: id, Category: cat, Message: msg})
	}
	if source == sourceCompact {
		o.n = s.SessionCount
		if rt != nil {
			o.n = rt.Session
		}
		return o
	}
	s.SessionCount++
	o.n = s.SessionCount
	msg := fmt.Sprintf("Session %d started (source=%s", o.n, source)
	if c.worker != "" {
		msg += ", worker=" + c.worker
	}
	entry(progress.Init, "", "", msg+")")
	if held != nil && held.Outcome == lock.Reclaimed {
		entry(progress.Warn, "", "", fmt.Sprintf("Removed stale lock from pid=%d", held.Stale.PID))
	}
	if held != nil && (held.Outcome == lock.Acquired || held.Outcome == lock.Reclaimed) {
		entry(progress.Lock, "", "", fmt.Sprintf("acquired (pid=%d)", held.Holder.PID))
	}
	if max := s.Config.MaxSessions; max > 0 && o.n > max {
		o.overLimit = true
		entry(progress.Stats, "", "", schedule.Count(s.Tasks).Line())
		return o
	}
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if t.Status != state.InProgress {
			continue
		}
		own := owns(s.Concurrent(), t.ClaimedBy, c.ids()...)
		expired := !own && lapsed(t.LeaseExpiresAt, at)
		if !own && !expired {
			continue // another worker's live claim
		}
		facts, err := recovery.Assess(c.workTree(), c.root, t)
		if expired {
			facts.Uncommitted = nil // another worker's tree: its changes are not here to see
		}
		if err != nil {
			o.toRecover = append(o.toRecover, fmt.Sprintf("%s: cannot assess (%v) -> run `%s`", describe(t.ID, t.Title), oneLine(err), recoverCmd(t.ID)))
			continue
		}
		row := recovery.Decide(facts)
		if row != recovery.NoProgress {
			o.toRecover = append(o.toRecover, fmt.Sprintf("%s: %s (%s) -> run `%s`", describe(t.ID, t.Title), facts.Summary(), row, recoverCmd(t.ID)))
			continue
		}
		why := "no uncommitted changes, no task commits, no checkpoints"
		if expired {
			why = fmt.Sprintf("lease of %s expired (%s); no task commits, no checkpoints", orNone(t.ClaimedBy), orNone(t.LeaseExpiresAt))
		}
		timedOut(t, at)
		entry(progress.Recovery, t.ID, "", fmt.Sprintf(`action="marked failed [%s] No progress detected" reason=%q`, failure.SessionTimeout, why))
		o.recovered = append(o.recovered, fmt.Sprintf("%s marked failed [%s] No progress detected (attempts %d/%d)",
			t.ID, failure.SessionTimeout, t.Attempts, t.MaxAttempts))
	}
	o.blocked = schedule.Validate(s.Tasks)
	schedule.Apply(s, o.blocked, at)
	for _, m := range o.blocked {
		entry(progress.Error, m.ID, failure.Dependency, m.Message)
	}
	return o
}

// timedOut records the decision matrix's deterministic row on t.
func timedOut(t *state.Task, at time.Time) {
	t.Status = state.Failed
	t.Attempts++
	t.ErrorLog = append(t.ErrorLog, "["+failure.SessionTimeout+"] No progress detected")
	t.FailedAt = at.UTC().Format(time.RFC3339)
	t.ClaimedBy, t.ClaimedAt, t.LeaseExpiresAt = "", "", ""
}

// healthCheck runs harness-init.sh when there is one, logs the outcome and
// returns the context line for it ("" without a script).
func healthCheck(dir string, n int, at time.Time) string {
	path := filepath.Join(dir, "harness-init.sh")
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	command := "bash ./harness-init.sh"
	if head, _ := readHead(path, 2); fi.Mode()&0o111 != 0 && head == "#!" {
		command = "./harness-init.sh" // its own interpreter
	}
	r := check(dir, command, envSeconds("HARNESS_INIT_TIMEOUT", 60*time.Second))
	line := "env: harness-init.sh " + verdict(r)
	e := progress.Entry{Time: at, Session: n, Type: progress.Init, Message: "Environment health check: PASS"}
	if r.Outcome != validation.Pass {
		e = progress.Entry{Time: at, Session: n, Type: progress.Error, Category: failure.EnvSetup,
			Message: "Environment health check: harness-init.sh " + verdict(r)}
		line += "\n  -> ENV_SETUP: fix the environment and run ./harness-init.sh again; if it still fails, stop and tell the user."
	}
	progress.Append(dir, e)
	return line
}

func readHead(path string, n int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, _ := f.Read(buf)
	return string(buf[:k]), nil
}

// busy is the decision for a session that found another live session holding
// the lock: it must leave the state alone.
func busy(h lock.Holder) hook.Decision {
	who := fmt.Sprintf("pid=%d", h.PID)
	if h.PID == 0 {
		who = "pid=unknown"
	}
	return hook.Decision{Kind: hook.Allow,
		Context: "ERROR: Another harness session is active (" + who + ")\n" +
			"This session must work on nothing harness-related: do not claim, checkpoint, validate, recover or edit harness tasks or files; the other session owns them.\n" +
			"hint: when that session has ended, start a new one (a dead holder's lock is reclaimed automatically).",
		Warning: "harness: another session (" + who + ") owns this project's harness; this session stays out of it"}
}

// unusable is the decision when the state cannot be read or written: the
// model is told why and that it must not work on the harness.
func unusable(c *call, err error) hook.Decision {
	var fe *failure.Error
	if !errors.As(err, &fe) {
		fe = failure.New(failure.EnvSetup, "%v", err)
	}
	text := fe.Error()
	if fe.Hint != "" {
		text += "\nhint: " + fe.Hint
	}
	progress.Append(c.root, progress.Entry{Time: c.now, Session: lastSession(c.root), Type: progress.Error, Category: fe.Category, Message: fe.Message})
	return hook.Decision{Kind: hook.Allow,
		Context: text + "\nThe harness cannot run until this is fixed by hand: do no harness work in this session; tell the user what is wrong.",
		Warning: "harness: " + fe.Error()}
}

// lastSession returns the session number of the log's last line, 0 when
// there is none.
func lastSession(dir string) int {
	lines, _ := progress.Tail(dir, 1)
	if len(lines) == 0 {
		return 0
	}
	var n int
	if i := strings.Index(lines[0], "[SESSION-"); i >= 0 {
		fmt.Sscanf(lines[0][i:], "[SESSION-%d]", &n)
	}
	return n
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func oneLine(err error) string { return clip(err.Error(), 200) }
