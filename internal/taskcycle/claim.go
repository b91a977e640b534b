package taskcycle

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/remote"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// Claim is what a claim did.
type Claim struct {
	Task  state.Task // the task now in progress; zero ID when none was claimed
	Base  string     // started_at_commit
	Why   string     // when nothing was claimed: why
	Stop  bool       // max_tasks_per_session reached: the session should end
	Count int        // tasks started by this session (with Stop)
	Stats schedule.Stats
	Dirty []string // uncommitted changes that are now part of the attempt
	// Reopenable, when nothing was claimed, are the tasks failed
	// [DEPENDENCY] whose dependencies are fixed now: `harness retry`, a
	// person's verb, brings them back.
	Reopenable []string
	// ProjectCheck is session_config.integration_check, which the task's
	// completion must pass too ("" when none is set, or with workers, whose
	// merge queue runs it on the merged tree).
	ProjectCheck string
}

// Claimed reports whether a task was claimed.
func (c *Claim) Claimed() bool { return c.Task.ID != "" }

// SessionScan is how many log lines back Claim looks for this session's
// Starting lines.
const SessionScan = 2000

// Claim takes task id (the next eligible task when id is empty) for this
// worker: started_at_commit is the work tree's HEAD, status in_progress,
// claimed_by, claimed_at and lease_expires_at set, a Starting line logged.
// Under the same lock it first reaps expired leases (concurrent mode) and
// runs dependency validation, and those changes are saved even when nothing
// is claimed. A refusal (another task in progress, an unknown id) is an
// error; "nothing eligible" and "session limit reached" are not, they are
// reported in the Claim.
func (w *Worker) Claim(id string) (*Claim, error) {
	// On a job shared through a remote, a claim that another machine's
	// change overtook (the task picked was claimed there meanwhile) is
	// made again on the new state: it picks again.
	for race := 0; ; race++ {
		c, err := w.claim(id)
		var conflict *state.Conflict
		if race < 5 && errors.As(err, &conflict) {
			continue
		}
		return c, err
	}
}

func (w *Worker) claim(id string) (*Claim, error) {
	s, err := state.Load(w.Root)
	if err != nil {
		return nil, err
	}
	tree, err := w.Tree(s)
	if err != nil {
		return nil, err
	}
	if s.Workers() {
		if err := w.startFromTip(s, tree); err != nil {
			return nil, err
		}
	}
	head := git.Head(tree.Top)
	if head == "" {
		return nil, failure.New(failure.EnvSetup, "%s has no commit to start from", tree.Top).
			WithHint("commit a baseline first: %s", git.BaselineAdvice(tree.Top))
	}
	c := &Claim{Base: head}
	c.Dirty, _ = git.Changes(tree.Top, w.Root)
	now := w.Now()
	var refusal error
	_, err = statecache.Update(w.Root, func(s *state.State) error {
		// Under the transaction lock, as checkpoint does: the mode and the
		// session lock's holder are read at the moment of the claim.
		if err := w.checkSession(s); err != nil {
			return err
		}
		var log []progress.Entry
		if s.Concurrent() {
			log = append(log, Reap(s, now)...)
		}
		log = append(log, ValidateDependencies(s, now)...)
		defer func() { progress.Append(w.Root, log...) }()
		if busy := w.Busy(s); busy != nil {
			refusal = failure.New(failure.Usage, "%s is already in progress (claimed by %s): one task at a time", busy.ID, orNone(busy.ClaimedBy)).
				WithHint("finish it with `harness validate %s`, or give it up with `harness fail %s --category TASK_EXEC \"why\"`; if its session was interrupted, run `harness recover`", failure.ShellArg(busy.ID), failure.ShellArg(busy.ID))
			return nil
		}
		if max := s.Config.MaxTasksPerSession; max > 0 {
			if n := w.sessionTasks(s); n >= max {
				c.Stop, c.Count, c.Stats = true, n, schedule.Count(s.Tasks)
				log = append(log, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Stats, Message: c.Stats.Line()})
				return nil
			}
		}
		var pick *state.Task
		if id != "" {
			pick = s.Task(id)
			if pick == nil {
				refusal = unknown(s, id)
				return nil
			}
			if why := whyNot(s, pick, now); why != "" {
				c.Why = why
				return nil
			}
		} else if ch := choose(s, w.ID); ch.Next != nil {
			pick = ch.Next
		} else if len(ch.Skipped) > 0 {
			pick = ch.Skipped[0] // refused below: the person must give it a check
		} else {
			c.Why = string(schedule.Explain(s.Tasks))
			c.Reopenable = schedule.Reopenable(s.Tasks)
			return nil
		}
		if strings.TrimSpace(pick.Command) == "" {
			// Claimed, it could only burn attempts: nothing can ever mark
			// it completed.
			refusal = failure.New(failure.Config, "%s has no validation command, so it can never be completed", pick.ID).
				WithHint("give it one first: `%s` (an objective check of the work)", CheckCommand(pick.ID))
			if n := schedule.CountUnchecked(s.Tasks); n > 1 {
				refusal = failure.New(failure.Config, "%s has no validation command, so it can never be completed; %d tasks have none", pick.ID, n).
					WithHint("give them one check: %s (an objective check of the work; `--dry-run` lists them first), or %s one of its own: `%s`",
						CheckAllCommand, pick.ID, CheckCommand(pick.ID))
			}
			return nil
		}
		pick.Status = state.InProgress
		pick.StartedAtCommit = head
		pick.ClaimedBy = w.ID
		pick.ClaimedAt = stamp(now)
		pick.LeaseExpiresAt = stamp(now.Add(w.Lease))
		pick.Generation++
		if s.Concurrent() {
			// The guard keeps other workers' destructive git out of this tree.
			pick.Worktree = tree.Top
		}
		if rc, shared := state.Shared(s.Dir); shared {
			// Whose the claim is, beyond the worker's name: the clone's.
			pick.ClaimedClone = rc.Clone
		}
		log = append(log, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Starting, TaskID: pick.ID,
			Message: fmt.Sprintf("%s (base=%s)", pick.Title, git.Short(head))})
		if s.Concurrent() {
			// The protocol's Starting line has no room for the worker, and
			// claimed_by is cleared when the task ends: the claim (a lease,
			// a lock on the task) says whose it was on a LOCK line.
			log = append(log, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Lock,
				Message: LeaseLine(pick.ID, pick.LeaseExpiresAt, w.ID)})
		}
		c.Task = *pick
		c.ProjectCheck = s.ProjectCheck()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if refusal != nil {
		return nil, refusal
	}
	if c.Claimed() && s.Concurrent() {
		writeHeld(tree.Top, heldClaim{ID: c.Task.ID, Generation: c.Task.Generation, Worker: w.ID})
	}
	return c, nil
}

// Next is the task Claim without an id would take from s now, and why
// none when it would take none: a task of this worker's in progress first
// (one task at a time), then the choice Claim makes. `harness next` and
// `harness status` show it, so that neither names a task a claim refuses.
func (w *Worker) Next(s *state.State) (schedule.Choice, schedule.Why) {
	if busy := w.Busy(s); busy != nil {
		return schedule.Choice{}, schedule.Why(fmt.Sprintf("%s is in progress (claimed by %s): one task at a time; finish it with `harness validate %s` first",
			busy.ID, orNone(busy.ClaimedBy), failure.ShellArg(busy.ID)))
	}
	ch := choose(s, w.ID)
	return ch, ch.Why(s.Tasks)
}

// choose picks the next task: in concurrent mode, apart from the other
// workers' scopes.
func choose(s *state.State, worker string) schedule.Choice {
	if rc, shared := state.Shared(s.Dir); shared {
		return schedule.ChooseSpread(s.Tasks, worker, machines(s.Dir, rc.Machine))
	}
	if s.Concurrent() {
		return schedule.ChooseApart(s.Tasks)
	}
	return schedule.Choose(s.Tasks)
}

// machines lists the machines of the shared job of dir by name, as their
// refs were last fetched, this one among them.
func machines(dir, self string) []string {
	names := []string{self}
	for m := range remote.Published(dir) {
		if m != self {
			names = append(names, m)
		}
	}
	slices.Sort(names)
	return names
}

// Busy returns the task that stops this worker from claiming another (one
// task at a time): in exclusive mode any task in progress, in concurrent
// mode this worker's own; nil when there is none. `harness next` asks it
// too, so it never names a task claim would refuse.
func (w *Worker) Busy(s *state.State) *state.Task {
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if t.Status == state.InProgress && !t.Validated() && (!s.Concurrent() || t.ClaimedBy == w.ID) {
			return t
		}
	}
	return nil
}

// LeaseLine is the message of the LOCK line that follows a concurrent-mode
// Starting line: "<id> claimed (lease_expires_at=<time> worker=<id>)". It
// ends like the Starting lines of older logs (" worker=<id>)"), so one
// suffix test finds a worker's claims in both.
func LeaseLine(taskID, expires, worker string) string {
	return fmt.Sprintf("%s claimed (lease_expires_at=%s worker=%s)", taskID, expires, worker)
}

// sessionTasks counts the tasks this session started, from its Starting
// lines, the protocol's per-session counter. In concurrent mode every worker
// logs under the global session number, so it counts this worker's claims:
// the LOCK lines after its Starting lines (Starting lines that still named
// the worker, in logs written before).
func (w *Worker) sessionTasks(s *state.State) int {
	lines, _ := progress.Tail(w.Root, SessionScan)
	tag := fmt.Sprintf("] [SESSION-%d] ", s.SessionCount)
	starting, lease := tag+progress.Starting+" [", tag+progress.Lock+" "
	mine := " worker=" + progress.OneLine(w.ID) + ")"
	n := 0
	for _, l := range lines {
		switch {
		case !s.Concurrent():
			if strings.Contains(l, starting) {
				n++
			}
		case strings.HasSuffix(l, mine) && (strings.Contains(l, starting) || strings.Contains(l, lease) && strings.Contains(l, " claimed (lease_expires_at=")):
			n++
		}
	}
	return n
}

// whyNot says why t cannot be claimed now, or "" when it can.
func whyNot(s *state.State, t *state.Task, now time.Time) string {
	byID := schedule.Index(s.Tasks)
	if schedule.Eligible(s.Tasks, byID, t) {
		return ""
	}
	switch {
	case t.Status == state.Completed:
		return t.ID + " is completed"
	case t.Status == state.InProgress:
		return fmt.Sprintf("%s is claimed by %s until %s", t.ID, orNone(t.ClaimedBy), orNone(t.LeaseExpiresAt))
	case t.PermanentlyFailed() && t.HasDependencyError():
		return t.ID + " is blocked: " + lastError(t) + "; " + reopenAdvice(s, t)
	case t.PermanentlyFailed():
		return fmt.Sprintf("%s failed permanently (%d/%d attempts); a person reopens it with `harness retry %s`", t.ID, t.Attempts, t.MaxAttempts, failure.ShellArg(t.ID))
	}
	var waits []string
	for _, d := range t.DependsOn {
		if j, ok := byID[d]; ok && s.Tasks[j].Status != state.Completed {
			waits = append(waits, fmt.Sprintf("%s (%s)", d, s.Tasks[j].Status))
		}
	}
	return fmt.Sprintf("%s waits on %s", t.ID, strings.Join(waits, ", "))
}

// reopenAdvice says how a task failed [DEPENDENCY] comes back: a failure
// for good, which only a person's `harness retry` undoes, once nothing
// would fail it again.
func reopenAdvice(s *state.State, t *state.Task) string {
	if ids := schedule.Reopenable(s.Tasks); slices.Contains(ids, t.ID) {
		return "its dependencies are fixed now: a person reopens it with " + RetryCommand(ids)
	}
	if cyc := schedule.CycleThrough(s.Tasks, t.ID); cyc != nil {
		return fmt.Sprintf("it is still on the cycle %s: a person changes one of its links with `harness edit ID --depends-on …`, then reopens the tasks with `harness retry ID…`", cyc)
	}
	msg := "its dependencies"
	if marks := schedule.Reopen(s.Tasks, []string{t.ID}); len(marks) > 0 {
		msg = marks[0].Message
	}
	return fmt.Sprintf("reopened now it would fail again (%s): a person fixes its dependencies first (`harness edit %s --depends-on …`), then reopens it with `harness retry %s`", msg, failure.ShellArg(t.ID), failure.ShellArg(t.ID))
}

// CheckAllCommand gives every task still to do without a validation
// command the same one (schedule.Unchecked selects them).
const CheckAllCommand = "`harness edit --where no-validation --validate \"COMMAND\"`"

// CheckCommand gives the task id a validation command: the step before a
// claim of a task that has none.
func CheckCommand(id string) string {
	return "harness edit " + failure.ShellArg(id) + ` --validate "COMMAND"`
}

// RetryCommand is the `harness retry` that reopens ids, quoted.
func RetryCommand(ids []string) string {
	args := make([]string, len(ids))
	for i, id := range ids {
		args[i] = failure.ShellArg(id)
	}
	return "`harness retry " + strings.Join(args, " ") + "`"
}

func lastError(t *state.Task) string {
	if len(t.ErrorLog) == 0 {
		return ""
	}
	return t.ErrorLog[len(t.ErrorLog)-1]
}

// Reap fails every in-progress task of s whose lease has expired, as the
// protocol's concurrent mode allows any worker to: attempts+1, error_log
// "[SESSION_TIMEOUT] Lease expired", claim cleared. The work of a reaped task
// lives in its worker's tree and is not touched. It returns the RECOVERY
// lines to append. Callers hold the transaction lock.
func Reap(s *state.State, now time.Time) []progress.Entry {
	var entries []progress.Entry
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if t.Status != state.InProgress || t.Validated() || !t.LeaseExpired(now) {
			continue
		}
		reason := fmt.Sprintf("lease of %s expired at %s", orNone(t.ClaimedBy), t.LeaseExpiresAt)
		markFailed(t, now, failure.SessionTimeout, "Lease expired")
		entries = append(entries, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Recovery, TaskID: t.ID,
			Message: recoveryMessage("marked failed [SESSION_TIMEOUT] Lease expired", reason)})
	}
	return entries
}

// markFailed records a failed attempt on t.
func markFailed(t *state.Task, now time.Time, category, message string) {
	t.Attempts++
	t.ErrorLog = append(t.ErrorLog, fmt.Sprintf("[%s] %s", category, progress.OneLine(message)))
	t.Status = state.Failed
	t.FailedAt = stamp(now)
	clearClaim(t)
}

func clearClaim(t *state.Task) { t.ClearClaim() }

// recoveryMessage renders `action="…" reason="…"`; inner double quotes
// become single ones so the line stays parseable.
func recoveryMessage(action, reason string) string {
	q := func(s string) string { return strings.ReplaceAll(progress.OneLine(s), `"`, `'`) }
	return fmt.Sprintf(`action="%s" reason="%s"`, q(action), q(reason))
}
