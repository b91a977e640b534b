package sessionhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/recovery"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/taskcycle"
	"github.com/harness-agent/harness/internal/validation"
)

// SessionStart sources, as Claude Code names them.
const (
	sourceStartup = "startup"
	sourceCompact = "compact"
	sourceUnknown = "unreadable payload" // not a source: what the context says instead
)

// opening is what SessionStart did to the state, for the context and the log.
type opening struct {
	n           int           // the session's number
	overLimit   bool          // max_sessions reached: the session must not work
	overBudget  []budget.Line // the job's budget is spent: the session must not work
	interrupted bool          // recovery has tasks to look at (taskcycle.Worker.Interrupted)
	recovered   []string
	toRecover   []string
	blocked     []string
	entries     []progress.Entry
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
		settleOff(p)
		return hook.Decision{}
	}
	if self, err := os.Executable(); err == nil {
		exportPath(os.Getenv("CLAUDE_ENV_FILE"), filepath.Dir(self))
	}
	if root.Paused(c.root) {
		return hook.Decision{Kind: hook.Allow, Context: "HARNESS PAUSED by the user: do no harness work in this session (no claim, checkpoint or validate) and do not try to resume it yourself. Answer what the user asks; the user continues the run with `harness resume`."}
	}
	source := p.Str("source")
	switch source {
	case "startup", "resume", "clear", "compact", "fork":
	default:
		source = sourceStartup
	}
	// A payload that cannot be read says nothing of a new session: like
	// compact it continues the session (it is not counted), rather than
	// counting one more at each garbled start.
	continued := source == sourceCompact || p.Malformed
	if p.Malformed {
		source = sourceUnknown
	}
	rt := ReadRuntime(c.root, c.session)
	if continued && rt != nil && rt.Excluded {
		// Locked out at its start, locked out for life (see stayOut): the
		// model lost what it was told, so it is told again.
		return excluded()
	}
	concurrent := peek(c.root)
	var held *lock.Result // nil in concurrent mode: no session lock
	if !concurrent {
		res, err := lock.Acquire(c.root, lock.Self())
		switch {
		case errors.Is(err, lock.ErrContention):
			res = lock.Result{Outcome: lock.Busy}
		case err != nil:
			return hook.Decision{Kind: hook.Allow, Context: fmt.Sprintf(
				"ERROR [%s] cannot take the harness session lock %s: %v\nhint: make %s writable (or set HARNESS_LOCK_DIR), then start a new session. Until then do no harness work in this session.",
				failure.EnvSetup, lock.SessionPath(c.root), err, lock.Dir())}
		}
		if res.Outcome == lock.Busy {
			return lockedOut(c, source, res.Holder)
		}
		held = &res
	}
	// The context's git facts do not depend on the state: gather them while
	// the state transaction runs (session-start's recovery row leaves git
	// alone).
	gitFacts := make(chan string, 1)
	modeOnly := &state.State{Config: state.Config{ConcurrencyMode: state.Exclusive}}
	if concurrent {
		modeOnly.Config.ConcurrencyMode = state.Concurrent
	}
	go func() { gitFacts <- gitLine(c.tree(modeOnly).Top, c.root) }()

	var o opening
	var s *state.State // nil when the session was counted without parsing the tasks
	var v view
	var err error
	var inProgress *state.State // the fast path's tasks in progress, the others not read
	restored := false
	if continued {
		// The same session goes on (after a compaction): nothing to count
		// or record, so the hooks' summary of the file is all it needs.
		sum, err := statecache.Load(c.root)
		if err != nil {
			return unusable(c, err)
		}
		o.n = sum.SessionCount
		if rt != nil && rt.Session > 0 {
			o.n = rt.Session
		}
		o.overLimit = sum.Config.PastMaxSessions(o.n)
		v, restored = summaryView(c, sum), sum.FromBackup
	} else if sum, ok := countFast(c, concurrent); ok {
		// Nothing to recover or validate (the cache says so): the one
		// change is the count, made without parsing the tasks.
		o.n = sum.SessionCount
		o.entries = startEntries(c, o.n, source, held)
		progress.Append(c.root, o.entries...)
		v = summaryView(c, sum)
		if len(sum.InProgress) > 0 {
			// Tasks in progress: recovery looks at them, read from the
			// file one by one; the others stay unparsed.
			ids := make([]string, len(sum.InProgress))
			for i, cl := range sum.InProgress {
				ids[i] = cl.ID
			}
			doc, _ := os.ReadFile(state.Path(c.root))
			inProgress = &state.State{Config: sum.Config, SessionCount: sum.SessionCount, Tasks: state.ParseTasks(doc, ids)}
			mine, expired, _ := c.worker().Interrupted(inProgress)
			o.interrupted = len(mine)+len(expired) > 0
		}
	} else {
		s, err = statecache.Update(c.root, func(s *state.State) error {
			o = open(c, s, source, held)
			return nil
		})
		if err != nil {
			return unusable(c, err)
		}
		progress.Append(c.root, o.entries...)
		if s.Concurrent() != concurrent {
			// peek read a corrupt file; the backup it was restored from
			// says otherwise: settle the lock by the restored state.
			if held, concurrent = settleLock(c, s.Concurrent(), held); held != nil && held.Outcome == lock.Busy {
				return lockedOut(c, source, held.Holder)
			}
		}
	}
	if s != nil {
		v = viewOf(s)
		restored = s.Restored || s.FromBackup
	}
	if !continued {
		account := budget.Start(c.root, c.session, o.n, p.Str("transcript_path"), c.now)
		if b := v.sum.Config.Budget; b.Any() && !o.overLimit {
			o.overBudget = budget.Over(budget.Measure(b, budget.Total(c.root, account), nil))
			if len(o.overBudget) > 0 {
				progress.Append(c.root, progress.Entry{Time: c.now, Session: o.n, Type: progress.Stop,
					Message: "budget " + budget.Join(o.overBudget) + "; no work started"})
			}
		}
	}

	var env string
	if !continued && !o.overLimit && len(o.overBudget) == 0 {
		if o.interrupted {
			from := s
			if from == nil {
				from = inProgress
			}
			after, err := o.recover(c, from)
			if err != nil {
				return unusable(c, err)
			}
			if s != nil || after != from {
				// Recovery wrote the state (or it was parsed whole):
				// the view is of the state as it is now.
				s, v = after, viewOf(after)
			}
		}
		env = healthCheck(c.root, o.n, c.now)
	}
	if !continued || rt == nil {
		// The session's story in the log begins here.
		rt = &Runtime{SessionID: c.session, Session: o.n, Source: source, Worker: c.workerID,
			StartedAt: c.now.UTC().Format(time.RFC3339), LogOffset: logSize(c.root)}
		if concurrent {
			rt.Held = heldBy(v.sum, taskcycle.WorkerID())
		}
		pruneRuntimes(c.root, c.now)
	}
	rt.save(c.root)
	context := startContext(c, v, started{source: source, o: o, env: env, restored: restored, held: held, gitFacts: gitFacts})
	switch source {
	case sourceCompact, "clear", "resume":
		if card := readCard(c.root, c.now); card != "" {
			context += "\n" + card + "(the resume card above is what this session was doing before its context was compacted or cleared; continue from it)\n"
		}
	}
	return hook.Decision{Kind: hook.Allow, Context: context}
}

// summaryView is the view of the tasks file from the hooks' summary of it,
// for a session start that did not parse it: the next task is in the
// summary, any other is read from the file when the context names it.
func summaryView(c *call, sum *statecache.Summary) view {
	return view{sum: sum, task: func(id string) *state.Task {
		if t := sum.NextTask; t != nil && t.ID == id {
			return t
		}
		doc, _ := os.ReadFile(state.Path(c.root))
		return state.ParseTask(doc, id)
	}}
}

// countFast counts the session without parsing the tasks file when the
// hooks' cache holds the summary of the file as it is and that summary says
// a full session start would change nothing else: dependency validation
// with nothing to mark, the session not past max_sessions, and the mode
// the lock was taken for. Tasks in progress are then read alone for
// recovery (SessionStart), which writes the state only when it acts. On a
// large state this is most of SessionStart's cost (docs/perf.md).
func countFast(c *call, concurrent bool) (*statecache.Summary, bool) {
	sum, ok, err := statecache.CountSession(c.root, func(sum *statecache.Summary) bool {
		return sum.DepsClean && sum.Concurrent == concurrent && !sum.Config.PastMaxSessions(sum.SessionCount+1)
	})
	if ok && err == nil {
		fastStarts++
		return sum, true
	}
	return nil, false
}

// fastStarts counts the sessions countFast counted (tests check which path
// a session start took).
var fastStarts int

// startEntries are the log lines that open session n: its start, and the
// session lock's story.
func startEntries(c *call, n int, source string, held *lock.Result) []progress.Entry {
	var entries []progress.Entry
	entry := func(typ, msg string) {
		entries = append(entries, progress.Entry{Time: c.now, Session: n, Type: typ, Message: msg})
	}
	msg := fmt.Sprintf("Session %d started (source=%s", n, source)
	if c.workerID != "" {
		msg += ", worker=" + c.workerID
	}
	entry(progress.Init, msg+")")
	if held != nil && held.Outcome == lock.Reclaimed {
		entry(progress.Warn, fmt.Sprintf("Removed stale lock from pid=%d", held.Stale.PID))
	}
	if held != nil && (held.Outcome == lock.Acquired || held.Outcome == lock.Reclaimed) {
		entry(progress.Lock, fmt.Sprintf("acquired (pid=%d)", held.Holder.PID))
	}
	return entries
}

// open counts the session, logs its start and validates dependencies, under
// the transaction lock.
func open(c *call, s *state.State, source string, held *lock.Result) opening {
	var o opening
	s.SessionCount++
	o.n = s.SessionCount
	o.entries = startEntries(c, o.n, source, held)
	if s.Config.PastMaxSessions(o.n) {
		o.overLimit = true
		o.entries = append(o.entries, progress.Entry{Time: c.now, Session: o.n, Type: progress.Stats, Message: schedule.Count(s.Tasks).Line()})
		return o
	}
	o.validate(s, c.now)
	mine, expired, _ := c.worker().Interrupted(s)
	o.interrupted = len(mine)+len(expired) > 0
	return o
}

// validate runs dependency validation on s (under the transaction lock) and
// records what it marked.
func (o *opening) validate(s *state.State, at time.Time) {
	marks := taskcycle.ValidateDependencies(s, at)
	o.entries = append(o.entries, marks...)
	for _, m := range marks {
		o.blocked = append(o.blocked, fmt.Sprintf("%s failed [%s] %s", m.TaskID, m.Category, m.Message))
	}
}

// lockedOut is the decision for a session that found another live session
// holding the lock: it is remembered as excluded for its whole life (see
// stayOut) and told to leave the harness alone.
func lockedOut(c *call, source string, holder lock.Holder) hook.Decision {
	if c.session != "" { // without an id the file would be every such session's
		(&Runtime{SessionID: c.session, Source: source, Worker: c.workerID, Excluded: true,
			StartedAt: c.now.UTC().Format(time.RFC3339), LogOffset: -1}).save(c.root)
	}
	return busy(holder)
}

// settleLock makes the session lock agree with the state's mode after a
// restore changed it: released in concurrent mode, taken in exclusive mode.
// It returns the lock now held (nil: none; Busy: another session has it).
func settleLock(c *call, concurrent bool, held *lock.Result) (*lock.Result, bool) {
	if concurrent {
		if held != nil {
			lock.Release(c.root, lock.Self())
		}
		return nil, true
	}
	res, err := lock.Acquire(c.root, lock.Self())
	if err != nil {
		res = lock.Result{Outcome: lock.Busy}
	}
	return &res, false
}

// peekBytes is how much of the tasks file peek reads first: session_config
// sits near the top of a file the harness wrote.
const peekBytes = 64 << 10

// peek reads, before the session takes its lock, the one setting that
// decides whether it takes one, whether the state is in concurrent mode,
// without parsing or even reading the whole file: on a 10,000-task state
// that is most of the hook's time. An unreadable or corrupt file reads as
// exclusive here; the transaction that follows restores it from its backup
// (or reports it), and SessionStart settles the lock again if the restored
// state says otherwise.
func peek(dir string) (concurrent bool) {
	f, err := os.Open(state.Path(dir))
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, peekBytes)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	cfg := gjson.GetBytes(head, "session_config")
	if !cfg.Exists() || cfg.Index <= 0 || cfg.Index+len(cfg.Raw) >= len(head) {
		// Not wholly inside the head (or absent): read it all.
		all, err := os.ReadFile(state.Path(dir))
		if err != nil {
			return false
		}
		cfg = gjson.GetBytes(all, "session_config")
	}
	return cfg.Get("concurrency_mode").Str == state.Concurrent
}

// recover carries out the Context Window Recovery Protocol the way `harness
// recover` does, limited to its deterministic row (no changes, no task
// commits, no checkpoints: failed [SESSION_TIMEOUT]) and to reaping expired
// leases; the rows that run the validation command are left for the agent.
// When it failed tasks, dependency validation runs again. It returns the
// state as it now is (s when nothing changed).
func (o *opening) recover(c *call, s *state.State) (*state.State, error) {
	got, err := c.worker().Recover(context.Background(), taskcycle.RecoverOptions{Rows: []recovery.Row{recovery.NoProgress}, From: s})
	if err != nil {
		o.toRecover = append(o.toRecover, fmt.Sprintf("recovery could not run: %s", oneLine(err)))
	}
	for _, r := range got {
		switch {
		case r.Done():
			o.recovered = append(o.recovered, recoveredLine(r))
		case !r.Assessed && !r.Expired && r.Err == nil:
			// This session's own live claim: not interrupted.
		default:
			left := r.Left
			if r.Assessed {
				left = fmt.Sprintf("%s (%s): %s", r.Facts.Summary(), r.Row, left)
			}
			if r.Err != nil {
				left += ": " + oneLine(r.Err)
			}
			o.toRecover = append(o.toRecover, describe(r.TaskID, r.Title)+": "+left)
		}
	}
	if len(o.recovered) == 0 {
		return s, nil
	}
	var more opening
	s, err = statecache.Update(c.root, func(s *state.State) error {
		more.validate(s, c.now)
		return nil
	})
	progress.Append(c.root, more.entries...)
	o.blocked = append(o.blocked, more.blocked...)
	return s, err
}

// recoveredLine says what recovery did to a task, in one line.
func recoveredLine(r taskcycle.Recovered) string {
	what := r.TaskID + " " + r.Action
	if o := r.Outcome; o != nil {
		if f := o.Failure; f != nil && !strings.Contains(r.Action, "["+f.Category+"]") {
			what += fmt.Sprintf(" [%s] %s", f.Category, f.Message)
		}
		what += fmt.Sprintf(" (attempts %d/%d)", o.Task.Attempts, o.Task.MaxAttempts)
	}
	return what
}

// healthCheck runs harness-init.sh when there is one, logs the outcome and
// returns the context line for it ("" without a script).
func healthCheck(dir string, n int, at time.Time) string {
	// The script as the session starts with it is the user's; from here on
	// a change to it is put back (internal/integrity).
	record.SaveInit(dir)
	path := filepath.Join(dir, root.InitScript)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	command := "bash ./harness-init.sh"
	if head, _ := readHead(path, 2); fi.Mode()&0o111 != 0 && head == "#!" {
		command = "./harness-init.sh" // its own interpreter
	}
	integrity.Check(dir, "a writer outside the harness", nil)
	r := check(dir, command, validation.EnvSeconds("HARNESS_INIT_TIMEOUT", 60*time.Second))
	line := "env: harness-init.sh " + verdict(r)
	e := progress.Entry{Time: at, Session: n, Type: progress.Init, Message: "Environment health check: PASS"}
	// The script is fenced like a validation: what it did to the harness
	// files is put back, and the check counts as failed.
	if fence := integrity.Check(dir, root.InitScript, nil); fence.Tampered() {
		what := "harness-init.sh changed harness files, which were put back: " + fence.Files()
		e = progress.Entry{Time: at, Session: n, Type: progress.Error, Category: failure.Tamper,
			Message: "Environment health check: " + what}
		line = "env: harness-init.sh FAIL [" + failure.Tamper + "]: " + what +
			"\n  -> " + failure.Tamper + ": harness-init.sh prepares the environment only; change the state with harness commands, and ask the user to fix the script."
	} else if r.Outcome != validation.Pass {
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

// excluded is the decision when a session that was locked out at its start
// starts again without a new session (compact): it still stays out.
func excluded() hook.Decision {
	return hook.Decision{Kind: hook.Allow,
		Context: "ERROR: this session started while another harness session was active, and stays out of the harness for its whole life.\n" +
			"Work on nothing harness-related: do not claim, checkpoint, validate, recover or edit harness tasks or files.\n" +
			"hint: to work on the harness, start a new session once the other one has ended.",
		Warning: "harness: this session was locked out of the project's harness at its start and stays out of it"}
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
		fe = failure.Wrap(failure.EnvSetup, err, "%v", err)
	}
	text := fe.Text()
	progress.Append(c.root, progress.Entry{Time: c.now, Session: progress.LastSession(c.root), Type: progress.Error, Category: fe.Category, Message: fe.Message})
	return hook.Decision{Kind: hook.Allow,
		Context: text + "\nThe harness cannot run until this is fixed by hand: do no harness work in this session; tell the user what is wrong.",
		Warning: "harness: " + fe.Error()}
}

func oneLine(err error) string { return clip(err.Error(), 200) }

// exportPath puts the directory of the harness binaries on the PATH of the
// session's Bash commands (through CLAUDE_ENV_FILE, which Claude Code sources
// before each one), so the agent can run `harness` whatever the user's PATH.
// dir is where this hook's executable lives; it is exported only when the
// harness command sits beside it.
func exportPath(envFile, dir string) {
	if envFile == "" {
		return
	}
	if _, err := os.Stat(filepath.Join(dir, "harness")); err != nil {
		return
	}
	line := fmt.Sprintf("export PATH=%s:\"$PATH\"\n", shellQuote(dir))
	if old, err := os.ReadFile(envFile); err == nil && strings.Contains(string(old), line) {
		return
	}
	f, err := os.OpenFile(envFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	f.WriteString(line)
	f.Close()
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
