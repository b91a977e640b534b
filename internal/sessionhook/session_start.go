package sessionhook

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/fence"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/recovery"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
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
	c, ok := locate(p)
	if !ok {
		return hook.Decision{}
	}
	if !c.Active() {
		c.settleOff()
		return hook.Decision{}
	}
	if self, err := os.Executable(); err == nil {
		exportPath(os.Getenv("CLAUDE_ENV_FILE"), filepath.Dir(self))
	}
	if c.Cancelled() {
		return hook.Decision{}
	}
	if c.Paused() {
		return hook.Decision{Kind: hook.Allow, Context: "HARNESS PAUSED by the user: do no harness work in this session (no claim, checkpoint or validate) and do not try to resume it yourself. Answer what the user asks; the user continues the run with `harness resume`."}
	}
	st := begin(c, p)
	// What changed since the last session's last hook (a process it left
	// running, a hand edit not adopted) is judged before this session
	// builds on it, as every other hook judges what changed since the one
	// before: counting the session writes the tasks file, and the record
	// would then hold a change the harness never made. A compaction goes
	// on with the session: its harness-init.sh too is judged.
	judge := integrity.Opening
	if st.continued {
		judge = integrity.Check
	}
	fence := judge(c.Project, "a writer outside the harness", integrity.Legal(c.Project))
	if st.continued && st.rt != nil && st.rt.Excluded {
		// Locked out at its start, locked out for life (see stayOut): the
		// model lost what it was told, so it is told again.
		return excluded()
	}
	if st.continued && st.rt != nil && st.rt.Unusable != "" {
		// Told at its start that the harness cannot run: a compaction
		// changes nothing of that (it writes nothing to try again with).
		return stillUnusable(st.rt.Unusable)
	}
	if !git.Available() {
		// A claim records its base commit and a validation commits: without
		// git no task can be taken or completed, so the session is told
		// so, not ordered to claim the next one.
		return *st.refuse(noGit(), "git is not installed")
	}
	// The context's git line takes a git process, the longest step of a
	// session start: it runs from here, beside everything after it.
	st.concurrent = peek(c.Root)
	gitFacts := st.gitFacts()
	if stop := st.lock(); stop != nil {
		return *stop
	}
	if stop := st.count(); stop != nil {
		return *stop
	}
	var env string
	if !st.continued {
		st.budget(p.Str("transcript_path"))
		if st.works() {
			if stop := st.recover(); stop != nil {
				return *stop
			}
			env = healthCheck(c.Project, st.o.n, c.now)
		}
	}
	st.saveRuntime()
	context := startContext(c, st.v, started{source: st.source, o: st.o, env: env, restored: st.restored, held: st.held, gitFacts: gitFacts})
	if note, _ := c.wiringNote(func() int { return st.o.n }); note != "" {
		context = note + "\n\n" + context
	}
	if fence.Tampered() {
		context = fence.Message() + "\n\n" + context
	}
	switch st.source {
	case sourceCompact, "clear", "resume":
		if card := readCard(c.Root, c.now); card != "" {
			context += "\n" + card + "(the resume card above is what this session was doing before its context was compacted or cleared; continue from it)\n"
		}
	}
	return hook.Decision{Kind: hook.Allow, Context: context}
}

// start is one session start under way: what each step found, for the
// steps after it.
type start struct {
	c          *call
	source     string
	continued  bool     // compact, or a payload that cannot be read: the session goes on
	rt         *Runtime // the session's runtime file as the start found it (nil: none)
	concurrent bool
	held       *lock.Result // the session lock; nil in concurrent mode
	o          opening
	s          *state.State // the parsed state; nil when the session was counted without parsing the tasks
	inProgress *state.State // the fast path's tasks in progress, the others not read
	v          view
	restored   bool // the tasks file was corrupt and was read from its backup
}

// begin reads what the payload and the runtime file say of this start.
func begin(c *call, p hook.Payload) *start {
	st := &start{c: c, source: p.Str("source")}
	switch st.source {
	case "startup", "resume", "clear", "compact", "fork":
	default:
		st.source = sourceStartup
	}
	// A payload that cannot be read says nothing of a new session: like
	// compact it continues the session (it is not counted), rather than
	// counting one more at each garbled start.
	st.continued = st.source == sourceCompact || p.Malformed
	if p.Malformed {
		st.source = sourceUnknown
	}
	st.rt = ReadRuntime(c.Record(), c.session)
	return st
}

// lock takes the session lock in exclusive mode (st.concurrent says the
// mode, read before the lock). It returns the decision
// to stop with when it cannot: another live session holds it, or the lock
// directory is unusable.
func (st *start) lock() (stop *hook.Decision) {
	c := st.c
	// The transaction lock's file, made here, outside Claude Code's
	// sandbox: the agent's verbs inside it open it, they cannot make it.
	lock.Prepare(c.Root)
	if st.concurrent {
		return nil
	}
	res, err := lock.Acquire(c.Root, lock.Self())
	switch {
	case errors.Is(err, lock.ErrContention):
		res = lock.Result{Outcome: lock.Busy}
	case err != nil:
		why := fmt.Sprintf("cannot take the harness session lock %s: %v", lock.SessionPath(c.Root), err)
		return st.refuse(hook.Decision{Kind: hook.Allow, Context: fmt.Sprintf(
			"ERROR [%s] %s\nhint: make %s writable (or set HARNESS_LOCK_DIR), then start a new session. Until then do no harness work in this session.",
			failure.EnvSetup, why, lock.Dir())}, why)
	}
	if res.Outcome == lock.Busy {
		d := lockedOut(c, st.source, res.Holder)
		return &d
	}
	st.held = &res
	return nil
}

// treeFile, in the record's directory and followed by a digest of the
// tree's path, keeps the tree's state as git last gave it and what that
// answer rests on (treecache). A dot file: the record's integrity checks
// leave it out, and it is no state, only the hooks' cache.
const treeFile = ".tree-cache-"

// gitFacts gathers the context's git line while the lock is taken and the
// state transaction runs: it does not depend on the state (session-start's
// recovery row leaves git alone). A session locked out does not wait for it.
func (st *start) gitFacts() <-chan string {
	facts := make(chan string, 1)
	modeOnly := &state.State{Config: state.Config{ConcurrencyMode: state.Exclusive}}
	if st.concurrent {
		modeOnly.Config.ConcurrencyMode = state.Concurrent
	}
	top, kept := st.c.tree(modeOnly).Top, ""
	if rec := st.c.Record(); rec.Dir != "" {
		// One file a tree: a job's workers each have their own.
		sum := digest.SHA256([]byte(top))
		kept = rec.Path(treeFile + hex.EncodeToString(sum[:6]))
	}
	go func() { facts <- gitLine(top, st.c.Root, kept) }()
	return facts
}

// count counts the session (unless it continues) in the cheapest way the
// state allows, and makes the view the context is built from. It returns
// the decision to stop with when the state cannot be used.
func (st *start) count() (stop *hook.Decision) {
	c := st.c
	switch {
	case st.continued:
		// The same session goes on (after a compaction): nothing to count
		// or record, so the hooks' summary of the file is all it needs.
		sum, err := statecache.Load(c.Root)
		if err != nil {
			return st.refuse(unusable(c, err), oneLine(err))
		}
		st.o.n = sum.SessionCount
		if st.rt != nil && st.rt.Session > 0 {
			st.o.n = st.rt.Session
		}
		st.o.overLimit = sum.Config.PastMaxSessions(st.o.n)
		st.v, st.restored = summaryView(c, sum), sum.FromBackup
		return nil
	case st.countFast():
		return nil
	}
	s, err := statecache.Update(c.Root, func(s *state.State) error {
		st.o = open(c, s, st.source, st.held)
		return nil
	})
	if err != nil {
		return st.refuse(unusable(c, err), oneLine(err))
	}
	progress.Append(c.Root, st.o.entries...)
	if s.Concurrent() != st.concurrent {
		// peek read a corrupt file; the backup it was restored from says
		// otherwise: settle the lock by the restored state.
		if st.held, st.concurrent = settleLock(c, s.Concurrent(), st.held); st.held != nil && st.held.Outcome == lock.Busy {
			d := lockedOut(c, st.source, st.held.Holder)
			return &d
		}
	}
	st.s, st.v, st.restored = s, viewOf(s), s.Restored || s.FromBackup
	return nil
}

// countFast counts the session without parsing the tasks when the hooks'
// summary says nothing else would change (countFast); tasks in progress
// are then read alone, for recovery. It reports whether it did.
func (st *start) countFast() bool {
	c := st.c
	sum, ok := countFast(c, st.concurrent)
	if !ok {
		return false
	}
	st.o.n = sum.SessionCount
	st.o.entries = startEntries(c, st.o.n, st.source, st.held)
	progress.Append(c.Root, st.o.entries...)
	st.v = summaryView(c, sum)
	if len(sum.InProgress) > 0 {
		ids := make([]string, len(sum.InProgress))
		for i, cl := range sum.InProgress {
			ids[i] = cl.ID
		}
		doc, _ := safefile.ReadFile(state.Path(c.Root), state.MaxFileSize)
		st.inProgress = &state.State{Config: sum.Config, SessionCount: sum.SessionCount, Tasks: state.ParseTasks(doc, ids)}
		mine, expired, _ := c.worker().Interrupted(st.inProgress)
		st.o.interrupted = len(mine)+len(expired) > 0
	}
	return true
}

// budget opens the session's account of the job's budget and notes a
// budget already spent (the session must then not work).
func (st *start) budget(transcript string) {
	c := st.c
	account := budget.Start(c.Record(), c.session, st.o.n, transcript, c.now)
	if b := st.v.sum.Config.Budget; b.Any() && !st.o.overLimit {
		st.o.overBudget = budget.Over(budget.Measure(b, budget.Total(c.Record(), account), nil))
		if len(st.o.overBudget) > 0 {
			progress.Append(c.Root, progress.Entry{Time: c.now, Session: st.o.n, Type: progress.Stop,
				Message: "budget " + budget.Join(st.o.overBudget) + "; no work started"})
		}
	}
}

// works reports whether the new session may work: not past max_sessions,
// the budget not spent.
func (st *start) works() bool { return !st.o.overLimit && len(st.o.overBudget) == 0 }

// recover recovers the work dead sessions left in progress, when there is
// any. It returns the decision to stop with when the state cannot be
// written.
func (st *start) recover() (stop *hook.Decision) {
	if !st.o.interrupted {
		return nil
	}
	from := st.s
	if from == nil {
		from = st.inProgress
	}
	after, err := st.o.recover(st.c, from)
	if err != nil {
		return st.refuse(unusable(st.c, err), oneLine(err))
	}
	if st.s != nil || after != from {
		// Recovery wrote the state (or it was parsed whole): the view is
		// of the state as it is now.
		st.s, st.v = after, viewOf(after)
	}
	return nil
}

// refuse is the session start's decision d when the harness cannot run in
// this session (d tells the model to do no harness work, why says what
// failed): the session's runtime file remembers it, so that its Stop,
// SubagentStop and TeammateIdle do not then order the work it was told to
// leave (stayOut). Before, a project the hooks could not write was told
// "do no harness work" at the start and "claim the next task" at every
// turn end until the valve opened.
func (st *start) refuse(d hook.Decision, why string) *hook.Decision {
	c := st.c
	if c.session != "" { // without an id the file would be every such session's
		rt := st.rt
		if !st.continued || rt == nil {
			rt = &Runtime{SessionID: c.session, Source: st.source, Worker: c.workerID,
				StartedAt: c.now.UTC().Format(time.RFC3339), LogOffset: -1}
		}
		rt.Unusable = why
		rt.save(c.Record())
	}
	return &d
}

// saveRuntime writes the session's runtime file; a new session's story in
// the log begins here. A session that goes on without one (its start found
// no harness: compacted before its first turn end) has no known beginning:
// its next turn end takes the recent lines as its own (readSessionLog).
func (st *start) saveRuntime() {
	c := st.c
	if !st.continued || st.rt == nil {
		offset := int64(-1)
		if !st.continued {
			offset = logSize(c.Root)
		}
		st.rt = &Runtime{SessionID: c.session, Session: st.o.n, Source: st.source, Worker: c.workerID,
			StartedAt: c.now.UTC().Format(time.RFC3339), LogOffset: offset}
		if st.concurrent {
			st.rt.Held = heldBy(st.v.sum, taskcycle.WorkerID())
		}
		pruneRuntimes(c.Record(), c.now)
	}
	st.rt.save(c.Record())
}

// summaryView is the view of the tasks file from the hooks' summary of it,
// for a session start that did not parse it: the next task is in the
// summary, any other is read from the file when the context names it.
func summaryView(c *call, sum *statecache.Summary) view {
	return view{sum: sum, task: func(id string) *state.Task {
		if t := sum.NextTask; t != nil && t.ID == id {
			return t
		}
		doc, _ := safefile.ReadFile(state.Path(c.Root), state.MaxFileSize)
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
	sum, ok, err := statecache.CountSession(c.Root, func(sum *statecache.Summary) bool {
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
			StartedAt: c.now.UTC().Format(time.RFC3339), LogOffset: -1}).save(c.Record())
	}
	return busy(holder)
}

// settleLock makes the session lock agree with the state's mode after a
// restore changed it: released in concurrent mode, taken in exclusive mode.
// It returns the lock now held (nil: none; Busy: another session has it).
func settleLock(c *call, concurrent bool, held *lock.Result) (*lock.Result, bool) {
	if concurrent {
		if held != nil {
			lock.Release(c.Root, lock.Self())
		}
		return nil, true
	}
	res, err := lock.Acquire(c.Root, lock.Self())
	if err != nil {
		res = lock.Result{Outcome: lock.Busy}
	}
	return &res, false
}

// peekBytes are how much of the tasks file peek reads before it reads it
// all: session_config sits near the top of a file the harness wrote, in
// its first page unless a tool put much before it (each page read into
// fresh memory costs a fresh process a page fault).
var peekBytes = [...]int{4 << 10, 64 << 10}

// peek reads, before the session takes its lock, the one setting that
// decides whether it takes one, whether the state is in concurrent mode,
// without parsing or even reading the whole file: on a 10,000-task state
// that is most of the hook's time. An unreadable or corrupt file reads as
// exclusive here; the transaction that follows restores it from its backup
// (or reports it), and SessionStart settles the lock again if the restored
// state says otherwise.
func peek(dir string) (concurrent bool) {
	f, err := safefile.Open(state.Path(dir))
	if err != nil {
		return false
	}
	defer f.Close()
	for _, size := range peekBytes {
		head := make([]byte, size)
		n, _ := f.ReadAt(head, 0)
		head = head[:n]
		cfg := gjson.GetBytes(head, "session_config")
		if n < size || cfg.Exists() && cfg.Index > 0 && cfg.Index+len(cfg.Raw) < len(head) {
			return concurrentIn(cfg) // wholly inside the head, or the head is the file
		}
	}
	// Not wholly inside the head (or absent): read it all.
	all, err := safefile.ReadFile(state.Path(dir), state.MaxFileSize)
	if err != nil {
		return false
	}
	return concurrentIn(gjson.GetBytes(all, "session_config"))
}

// concurrentIn reports whether session_config's value cfg sets the
// concurrent mode.
func concurrentIn(cfg gjson.Result) bool {
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
	s, err = statecache.Update(c.Root, func(s *state.State) error {
		more.validate(s, c.now)
		return nil
	})
	progress.Append(c.Root, more.entries...)
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
func healthCheck(p *project.Project, n int, at time.Time) string {
	dir := p.Root
	// The script as the session starts with it is the user's; from here on
	// a change to it is put back (internal/integrity).
	p.Record().SaveInit()
	path := filepath.Join(dir, root.InitScript)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	command := "bash ./harness-init.sh"
	if head, _ := readHead(path, 2); fi.Mode()&0o111 != 0 && head == "#!" {
		command = "./harness-init.sh" // its own interpreter
	}
	// Settled first, so that only what the script did is the script's.
	integrity.Check(p, "a writer outside the harness", integrity.Legal(p))
	f := fence.Hold(p)
	r := f.Run(context.Background(), dir, command, validation.EnvSeconds("HARNESS_INIT_TIMEOUT", 60*time.Second))
	line := "env: harness-init.sh " + verdict(r)
	e := progress.Entry{Time: at, Session: n, Type: progress.Init, Message: "Environment health check: PASS"}
	// The script is fenced like a validation: what it did to the harness
	// files or the record is put back, and the check counts as failed.
	if fenced := f.Close(root.InitScript); fenced.Tampered() {
		what := "harness-init.sh changed harness files, which were put back: " + fenced.Files()
		e = progress.Entry{Time: at, Session: n, Type: progress.Error, Category: failure.Tamper,
			Message: "Environment health check: " + what}
		line = "env: harness-init.sh FAIL [" + failure.Tamper + "]: " + what +
			"\n  -> " + failure.Tamper + ": harness-init.sh prepares the environment only; change the state with harness commands, and ask the user to fix the script."
	} else if r.Unconfined != "" {
		e = progress.Entry{Time: at, Session: n, Type: progress.Error, Category: failure.EnvSetup,
			Message: "Environment health check: harness-init.sh not run: " + r.Unconfined}
		line = "env: harness-init.sh not run: " + r.Unconfined +
			"\n  -> ENV_SETUP: at the sandboxed level the harness runs the project's commands confined; stop and tell the user: " + fence.Hint()
	} else if r.Outcome != validation.Pass {
		e = progress.Entry{Time: at, Session: n, Type: progress.Error, Category: failure.EnvSetup,
			Message: "Environment health check: harness-init.sh " + verdict(r)}
		line += "\n  -> ENV_SETUP: fix the environment and run ./harness-init.sh again; if it still fails, stop and tell the user."
	}
	progress.Append(dir, e)
	return line
}

func readHead(path string, n int) (string, error) {
	f, err := safefile.Open(path)
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

// noGit is the session start's decision where git cannot be found: the
// harness keeps its checkpoints in it.
func noGit() hook.Decision {
	return hook.Decision{Kind: hook.Allow,
		Context: "ERROR [" + failure.EnvSetup + "] git is not installed: the harness keeps its checkpoints in git (a claim records the base commit, a validation commits the work), so no task can be claimed or completed.\n" +
			"Do no harness work in this session; tell the user to install git, then start a new session.",
		Warning: "harness: git is not installed; this session does no harness work"}
}

// stillUnusable is a continued session's start (after a compaction) when
// its first start found the harness unable to run (why): the model is told
// again, as at the start.
func stillUnusable(why string) hook.Decision {
	return hook.Decision{Kind: hook.Allow,
		Context: "ERROR: this session's start found that the harness cannot run here (" + why + ").\n" +
			"Do no harness work in this session: do not claim, checkpoint, validate, recover or edit harness tasks or files; tell the user what is wrong.\n" +
			"hint: once it is fixed, a new session works on the harness again.",
		Warning: "harness: this session's start found the harness unable to run (" + why + "); it stays out of the harness"}
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
	progress.Append(c.Root, progress.Entry{Time: c.now, Session: progress.LastSession(c.Root), Type: progress.Error, Category: fe.Category, Message: fe.Message})
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
	if old, err := safefile.ReadFile(envFile, safefile.Small); err == nil && strings.Contains(string(old), line) {
		return
	}
	f, err := safefile.Append(envFile, 0o644) // (never waiting on a FIFO)
	if err != nil {
		return
	}
	f.WriteString(line)
	f.Close()
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
