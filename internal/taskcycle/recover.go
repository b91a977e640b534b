package taskcycle

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/fence"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/recovery"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/validation"
)

// RecoverOptions choose what Recover carries out.
type RecoverOptions struct {
	// Rows limits the decision-matrix rows carried out; tasks in other rows
	// (and tasks whose started_at_commit is missing) are assessed and
	// reported but left alone. nil carries out every row. The SessionStart
	// hook passes []recovery.Row{recovery.NoProgress}.
	Rows []recovery.Row
	// DryRun assesses and reports without changing anything.
	DryRun bool
	// Resume names a task in the CheckpointsOnly row whose checkpointed
	// state the agent has verified (work outside git, say): instead of being
	// failed it stays in_progress, re-claimed by this worker.
	Resume string
	// From is the state to assess, when the caller has just read or written
	// it (the SessionStart hook, on a large state, saves a second parse);
	// nil loads it. Changes are made in their own transactions either way.
	From *state.State
}

// Recovered is what Recover found and did for one task.
type Recovered struct {
	TaskID, Title string
	Assessed      bool // Facts and Row are set
	Facts         recovery.Facts
	Row           recovery.Row
	Action        string   // as logged in the RECOVERY line; "" when nothing was done
	Reason        string   // as logged
	Outcome       *Outcome // the outcome recorded, when the task was completed or failed
	Left          string   // why the task was left as it was, when it was
	Err           error    // the problem that left it (CONFIG, ENV_SETUP, …)
	Expired       bool     // another worker's claim whose lease expired
}

// Done reports whether the task was recovered (moved out of the state it was
// found in, or resumed).
func (r *Recovered) Done() bool { return r.Action != "" }

// Interrupted sorts the tasks in progress for recovery by this worker: mine
// are the ones to assess in this work tree (exclusive mode: every task in
// progress; concurrent mode: the ones claimed by this worker), expired are
// other workers' claims whose lease has run out, to be failed without
// looking at a tree, and live are claims left alone: in exclusive mode the
// claim of this very Claude Code session while its lease lasts (it is not
// interrupted, it is being worked on).
func (w *Worker) Interrupted(s *state.State) (mine, expired, live []state.Task) {
	now := w.Now()
	for _, t := range s.Tasks {
		switch {
		case t.Status != state.InProgress, t.Validated():
			// Waiting in the merge queue: its work is committed and kept
			// by a ref; the queue, not a recovery, decides it.
		case !s.Concurrent() && t.ClaimedBy == w.ID && strings.HasPrefix(w.ID, "session:") && !t.LeaseExpired(now):
			live = append(live, t)
		case !s.Concurrent() || t.ClaimedBy == w.ID:
			mine = append(mine, t)
		case t.LeaseExpired(now):
			expired = append(expired, t)
		}
	}
	return mine, expired, live
}

// Recover runs the Context Window Recovery Protocol for every task
// Interrupted finds: the decision matrix (recovery.Assess, recovery.Decide)
// in this worker's tree, then the row's action, each logged as a RECOVERY
// line. Running it again finds nothing left to do. Per-task problems are in
// each Recovered's Err; the error is for problems that stop everything.
func (w *Worker) Recover(ctx context.Context, opts RecoverOptions) ([]Recovered, error) {
	s := opts.From
	if s == nil {
		var err error
		if s, err = state.Load(w.Root); err != nil {
			return nil, err
		}
	}
	if err := w.checkSession(s); err != nil {
		return nil, err
	}
	mine, expired, live := w.Interrupted(s)
	if opts.Resume != "" && !slices.ContainsFunc(mine, func(t state.Task) bool { return t.ID == opts.Resume }) {
		return nil, failure.New(failure.Usage, "--resume %s: not an interrupted task of this worker", opts.Resume).
			WithHint("`harness recover --dry-run` lists what recovery would do")
	}
	var out []Recovered
	for _, t := range live {
		out = append(out, Recovered{TaskID: t.ID, Title: t.Title,
			Left: fmt.Sprintf("claimed by this session (lease until %s): not interrupted; finish it with `harness validate %s` or `harness fail %s`", t.LeaseExpiresAt, failure.ShellArg(t.ID), failure.ShellArg(t.ID))})
	}
	if len(mine) > 0 {
		tree, err := w.Tree(s)
		if err != nil {
			return nil, err
		}
		for _, t := range mine {
			out = append(out, w.recoverTask(ctx, s, t, tree, opts))
		}
	}
	for _, t := range expired {
		out = append(out, w.reapOne(s, t, opts.DryRun))
	}
	return out, nil
}

func (w *Worker) recoverTask(ctx context.Context, s *state.State, t state.Task, tree Tree, opts RecoverOptions) Recovered {
	rc := Recovered{TaskID: t.ID, Title: t.Title}
	facts, err := recovery.Assess(tree.Top, w.Root, &t)
	if err != nil {
		rc.Err = failure.Wrap(failure.EnvSetup, err, "cannot assess %s in %s: %v", t.ID, tree.Top, err)
		rc.Left = "git could not be read"
		return rc
	}
	rc.Assessed, rc.Facts, rc.Row = true, facts, recovery.Decide(facts)
	resume := opts.Resume == t.ID
	if resume && (facts.BaseMissing || rc.Row != recovery.CheckpointsOnly) {
		rc.Err = failure.New(failure.Usage, "--resume %s: only for a task with checkpoints and no changes since its base; found %s (%s)", t.ID, rc.Row, facts.Summary())
		rc.Left = "not resumable"
		return rc
	}
	switch {
	case opts.DryRun:
		rc.Left = "dry run: would " + plan(rc.Row, facts)
		return rc
	case opts.Rows != nil && (facts.BaseMissing || !slices.Contains(opts.Rows, rc.Row)):
		rc.Left = "left for `harness recover`: it would " + plan(rc.Row, facts)
		return rc
	}
	base := git.Short(t.StartedAtCommit)
	switch {
	case facts.BaseMissing:
		rc.Outcome, rc.Err = w.fail(ctx, t, tree, failure.TaskExec, fmt.Sprintf("started_at_commit %s missing", orNull(t.StartedAtCommit)), false)
		rc.Action, rc.Reason = "marked failed at max_attempts", fmt.Sprintf("started_at_commit %s does not exist (%s)", orNull(t.StartedAtCommit), facts.Summary())
	case rc.Row == recovery.NoProgress:
		rc.Outcome, rc.Err = w.fail(ctx, t, tree, failure.SessionTimeout, "No progress detected", false)
		rc.Action, rc.Reason = "marked failed", "No progress detected: no changes, no task commits, no checkpoints since "+base
	case rc.Row == recovery.CheckpointsOnly && resume:
		rc.Err = w.resume(t)
		last := t.Checkpoints[len(t.Checkpoints)-1]
		rc.Action = fmt.Sprintf("resumed at checkpoint %d/%d, re-claimed by %s", last.Step, last.Total, w.ID)
		rc.Reason = "the agent verified the checkpointed state; no changes since " + base
	case rc.Row == recovery.CheckpointsOnly:
		rc.Outcome, rc.Err = w.fail(ctx, t, tree, failure.SessionTimeout, fmt.Sprintf("Checkpointed work was lost (no changes since %s)", base), false)
		rc.Action, rc.Reason = "marked failed", fmt.Sprintf("%d checkpoints but no changes and no task commits since %s", facts.Checkpoints, base)
	default:
		w.validateInterrupted(ctx, s, t, tree, &rc)
	}
	if rc.Err != nil {
		rc.Action = ""
		if rc.Left == "" {
			rc.Left = "left as it was"
		}
		return rc
	}
	w.logLocked(progress.Entry{Time: w.Now(), Session: s.SessionCount, Type: progress.Recovery, TaskID: t.ID,
		Message: recoveryMessage(rc.Action, rc.Reason)})
	return rc
}

// validateInterrupted carries out the three rows that run validation.command.
func (w *Worker) validateInterrupted(ctx context.Context, s *state.State, t state.Task, tree Tree, rc *Recovered) {
	reason := fmt.Sprintf("%s since %s (%s)", map[recovery.Row]string{
		recovery.CommittedOnly:   "task commits, no uncommitted changes",
		recovery.UncommittedOnly: "uncommitted changes, no task commits",
		recovery.Both:            "task commits and uncommitted changes",
	}[rc.Row], git.Short(t.StartedAtCommit), rc.Facts.Summary())
	if strings.TrimSpace(t.Command) == "" {
		rc.Err = w.missingCommand(s, &t)
		return
	}
	committed := ""
	if rc.Row == recovery.Both {
		hash, _, err := git.CommitAll(tree.Top, w.Root, fmt.Sprintf("%s: %s (recovered uncommitted work)", t.ID, t.Title))
		if err != nil {
			rc.Err = failure.Wrap(failure.EnvSetup, err, "cannot commit the uncommitted work of %s: %v", t.ID, err)
			return
		}
		committed = fmt.Sprintf("committed the uncommitted changes (%s), ", git.Short(hash))
	}
	f := fence.Open(w.Project())
	r := f.Run(ctx, tree.Dir, t.Command, t.Timeout())
	if fc := f.Close(fmt.Sprintf("the validation of %s (`%s`) in recovery", t.ID, t.Command)); fc.Tampered() {
		rc.Outcome, rc.Err = w.fail(ctx, t, tree, failure.Tamper, "the validation command changed harness files, which were put back: "+fc.Files(), true)
		if rc.Err == nil {
			rc.Action, rc.Reason = "validated: [TAMPER], marked failed", reason
		}
		return
	}
	if ctx.Err() != nil {
		rc.Err = failure.New(failure.TaskExec, "recovery of %s interrupted during validation: nothing recorded", t.ID)
		return
	}
	verdict := r.Outcome.String()
	if r.Outcome == validation.Pass {
		// A completion in recovery passes the project's check too, as one
		// by harness validate does.
		pc, o, err := w.projectCheck(ctx, s, t, tree, r)
		switch {
		case err != nil:
			rc.Err = err
			return
		case o != nil && o.Failure.Category == failure.Tamper:
			rc.Outcome, verdict = o, "PASS, integration_check [TAMPER]"
		case o != nil:
			rc.Outcome, verdict = o, "PASS, integration_check "+pc.Outcome.String()
		}
	}
	if rc.Outcome == nil {
		rc.Outcome, rc.Err = w.record(ctx, s, t, tree, r)
	}
	if rc.Err != nil {
		return
	}
	if o := rc.Outcome; o.Completed {
		rc.Action = fmt.Sprintf("%svalidated: PASS, marked completed (commit %s)", committed, git.Short(o.Commit))
	} else if o.Failure.RolledBack {
		rc.Action = fmt.Sprintf("%svalidated: %s, rolled back to %s (snapshot %s), marked failed", committed, verdict, git.Short(t.StartedAtCommit), o.Failure.Snapshot)
	} else {
		rc.Action = fmt.Sprintf("%svalidated: %s, marked failed (not rolled back: %s)", committed, verdict, o.Failure.NotRolledBack)
	}
	rc.Reason = reason
}

// resume re-claims an interrupted task for this worker, keeping it in
// progress with its base and checkpoints.
func (w *Worker) resume(t state.Task) error {
	now := w.Now()
	_, err := statecache.Update(w.Root, func(s *state.State) error {
		cur := s.Task(t.ID)
		if !sameClaim(cur, &t) {
			return changed(cur, t.ID)
		}
		cur.ClaimedBy = w.ID
		if rc, shared := state.Shared(s.Dir); shared {
			cur.ClaimedClone = rc.Clone
		}
		cur.ClaimedAt = stamp(now)
		cur.LeaseExpiresAt = stamp(now.Add(w.Lease))
		return nil
	})
	return err
}

// reapOne fails another worker's expired claim, as Reap does.
func (w *Worker) reapOne(s *state.State, t state.Task, dryRun bool) Recovered {
	rc := Recovered{TaskID: t.ID, Title: t.Title, Expired: true}
	reason := fmt.Sprintf("lease of %s expired at %s", orNone(t.ClaimedBy), t.LeaseExpiresAt)
	if dryRun {
		rc.Left = "dry run: would mark it failed: " + reason
		return rc
	}
	now := w.Now()
	_, rc.Err = statecache.Update(w.Root, func(s *state.State) error {
		cur := s.Task(t.ID)
		if !sameClaim(cur, &t) || !cur.LeaseExpired(now) {
			return changed(cur, t.ID)
		}
		markFailed(cur, now, failure.SessionTimeout, "Lease expired")
		rc.Outcome = &Outcome{Task: *cur, Failure: &Failure{Category: failure.SessionTimeout, Message: "Lease expired",
			Base: t.StartedAtCommit, Permanent: cur.PermanentlyFailed(), NotRolledBack: "the work is in " + orNone(t.ClaimedBy) + "'s work tree"}}
		rc.Action, rc.Reason = "marked failed [SESSION_TIMEOUT] Lease expired", reason
		return progress.Append(w.Root, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Recovery, TaskID: t.ID,
			Message: recoveryMessage(rc.Action, rc.Reason)})
	})
	if rc.Err != nil {
		rc.Action, rc.Left = "", "left as it was"
	}
	return rc
}

// plan says in a phrase what carrying out a row does.
func plan(row recovery.Row, f recovery.Facts) string {
	if f.BaseMissing {
		return "mark it failed at max_attempts (started_at_commit missing)"
	}
	switch row {
	case recovery.NoProgress:
		return "mark it failed [SESSION_TIMEOUT] No progress detected"
	case recovery.CheckpointsOnly:
		return "mark it failed (checkpointed work lost), unless you verified the checkpointed state: then `harness recover --resume ID` keeps it in progress"
	case recovery.CommittedOnly:
		return "run validation.command: PASS completes it, FAIL rolls back and fails it"
	case recovery.UncommittedOnly:
		return "run validation.command with the changes present: PASS commits and completes it, FAIL rolls back and fails it"
	case recovery.Both:
		return "commit the uncommitted changes, run validation.command: PASS completes it, FAIL rolls back and fails it"
	}
	return row.String()
}
