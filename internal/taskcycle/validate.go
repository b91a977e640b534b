package taskcycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/fence"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/review"
	"github.com/harness-agent/harness/internal/scope"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/validation"
)

// Outcome is what Validate, Fail or a recovery recorded for a task.
type Outcome struct {
	Task  state.Task         // as recorded
	Check *validation.Result // the validation run, when one ran
	// ProjectCheck is session_config.integration_check run in the tree
	// after the validation passed, when it ran (no workers: with them the
	// merge queue runs it on the merged tree, Integration).
	ProjectCheck *CheckRun
	Completed    bool
	Commit       string            // completed: the commit holding the work
	NewCommit    bool              // completed: Commit was made by the harness just now
	Failure      *Failure          // failed
	Tree         Tree              // the work tree it was carried out in
	Fence        *integrity.Result // what the validation command did to harness files, put back
	// With workers: Queued when the task passed in the worker's tree and
	// waits in the merge queue; Integration when the queue took it (then
	// Completed, or a Failure [MERGE]); QueueErr why the queue did not.
	Queued      bool
	Supervised  bool // queued for the supervisor of `harness workers`, which integrates
	Integration *Integration
	QueueErr    error
	Review      *review.Verdict // the reviewer's, when one ran
}

// Failure is how a failed attempt was recorded and undone.
type Failure struct {
	Category, Message string
	Permanent         bool   // no attempts left (or a [DEPENDENCY] failure)
	BaseMissing       bool   // started_at_commit is gone: failed at max_attempts
	Base              string // started_at_commit
	Snapshot          string // the ref holding the attempt's work tree, "" when none was taken
	RolledBack        bool
	NotRolledBack     string             // why there was no rollback
	Cleanup           *validation.Result // on_failure.cleanup, when defined
	CleanupFence      *integrity.Result  // what the cleanup did to harness files, put back
	Dependents        []string           // the tasks that depend on the failed one
}

// Validate runs task id's validation.command in the worker's tree and
// records the result: PASS commits the work and completes the task; FAIL or
// TIMEOUT fails the attempt and rolls the tree back to started_at_commit
// (after a snapshot). A missing command (CONFIG) or program (ENV_SETUP) is a
// *TaskError and records nothing. The transaction lock is not held while the
// command runs; the result is recorded only if the task is still the same
// claim when it ends.
func (w *Worker) Validate(ctx context.Context, id string) (*Outcome, error) {
	s, t, err := w.load(id)
	if err != nil {
		return nil, err
	}
	if err := w.own(s, t); err != nil {
		return nil, err
	}
	if err := w.checkSession(s); err != nil {
		return nil, err
	}
	if strings.TrimSpace(t.Command) == "" {
		return nil, w.missingCommand(s, t)
	}
	tree, err := w.Tree(s)
	if err != nil {
		return nil, err
	}
	f := fence.Open(w.Project())
	r := f.Run(ctx, tree.Dir, t.Command, t.Timeout())
	// The command is the project's, not the harness's: whatever it did to
	// the harness files or the record is put back before anything is
	// recorded, and an attempt whose check rewrote the state it is judged
	// by has failed.
	if fence := f.Close(fmt.Sprintf("the validation of %s (`%s`)", id, t.Command)); fence.Tampered() {
		o, err := w.fail(ctx, *t, tree, failure.Tamper, "the validation command changed harness files, which were put back: "+fence.Files(), true)
		if o != nil {
			o.Check = &r
			o.Fence = &fence
		}
		return o, err
	}
	if ctx.Err() != nil {
		return nil, failure.New(failure.TaskExec, "validation of %s interrupted: nothing recorded", id).
			WithHint("run `harness validate %s` again", failure.ShellArg(id))
	}
	if r.Outcome == validation.Pass {
		if outside := outOfScope(tree, w.Root, t); len(outside) > 0 {
			o, err := w.fail(ctx, *t, tree, failure.Scope, "changed outside allowed_paths: "+listFiles(outside), true)
			if o != nil {
				o.Check = &r
			}
			return o, err
		}
		pc, o, err := w.projectCheck(ctx, s, *t, tree, r)
		if o != nil || err != nil {
			return o, err
		}
		if reviewed(s, t) {
			o, err = w.review(ctx, s, *t, tree, r)
		} else {
			o, err = w.record(ctx, s, *t, tree, r)
		}
		if o != nil {
			o.ProjectCheck = pc
		}
		return o, err
	}
	return w.record(ctx, s, *t, tree, r)
}

// record turns a validation result into the task's outcome.
func (w *Worker) record(ctx context.Context, s *state.State, t state.Task, tree Tree, r validation.Result) (*Outcome, error) {
	var o *Outcome
	var err error
	switch r.Outcome {
	case validation.Pass:
		if s.Workers() {
			o, err = w.queueAndIntegrate(ctx, t, tree)
		} else {
			o, err = w.complete(t, tree)
		}
	case validation.Missing:
		return nil, w.missingProgram(s, &t, r)
	case validation.Timeout:
		o, err = w.fail(ctx, t, tree, failure.Timeout, fmt.Sprintf("validation exceeded %ds", int(t.Timeout().Seconds())), true)
	default:
		o, err = w.fail(ctx, t, tree, failure.TestFail, r.FirstLine, true)
	}
	if o != nil {
		o.Check = &r
	}
	return o, err
}

func (w *Worker) missingCommand(s *state.State, t *state.Task) error {
	e := &TaskError{TaskID: t.ID, Err: failure.New(failure.Config, "Missing validation.command").
		WithHint("a human must set tasks[].validation.command for %s in %s (an objective check; the harness does not guess one), then run `harness validate %s`", t.ID, state.FileName, failure.ShellArg(t.ID))}
	w.logLocked(progress.Entry{Time: w.Now(), Session: s.SessionCount, Type: progress.Error, TaskID: t.ID, Category: failure.Config, Message: e.Err.Message})
	return e
}

func (w *Worker) missingProgram(s *state.State, t *state.Task, r validation.Result) error {
	return w.notRun(s, t, r, "validation", "validation command")
}

// notRun is the error of a check (what: the validation, or the
// integration_check, called command where its program is named) that could
// not run: its program missing, or a sandboxed level that cannot confine it.
// Nothing is recorded against the task.
func (w *Worker) notRun(s *state.State, t *state.Task, r validation.Result, what, command string) error {
	if r.Unconfined != "" {
		e := &TaskError{TaskID: t.ID, Err: failure.New(failure.EnvSetup, "%s of %s not run: at the sandboxed level it runs confined, and %s", what, t.ID, r.Unconfined).
			WithHint("%s; then `harness validate %s`: the task stays in_progress and no attempt was counted", fence.Hint(), failure.ShellArg(t.ID))}
		w.logLocked(progress.Entry{Time: w.Now(), Session: s.SessionCount, Type: progress.Error, TaskID: t.ID, Category: failure.EnvSetup, Message: e.Err.Message})
		return e
	}
	prog := r.Program
	if prog == "" {
		prog = "a program it runs"
	}
	e := &TaskError{TaskID: t.ID, Err: failure.New(failure.EnvSetup, "%s not found: %s (%s)", command, prog, r.FirstLine).
		WithHint("install %s or fix PATH (re-run harness-init.sh), then `harness validate %s`; the task stays in_progress and no attempt was counted", prog, failure.ShellArg(t.ID))}
	w.logLocked(progress.Entry{Time: w.Now(), Session: s.SessionCount, Type: progress.Error, TaskID: t.ID, Category: failure.EnvSetup, Message: e.Err.Message})
	return e
}

// commitWork commits the work of claim t, whose validation passed, in the
// tree (harness files excluded): hash is the commit holding it, made
// whether this call made it.
func (w *Worker) commitWork(t state.Task, tree Tree) (hash string, made bool, err error) {
	hash, made, err = git.CommitAll(tree.Top, w.Root, fmt.Sprintf("%s: %s", t.ID, t.Title))
	if err != nil {
		return "", false, failure.Wrap(failure.EnvSetup, err, "validation of %s passed but the work could not be committed: %v", t.ID, err).
			WithHint("fix what stopped the commit (a pre-commit hook? a git identity?), then run `harness validate %s` again: the task stays in_progress", failure.ShellArg(t.ID))
	}
	return hash, made, nil
}

// complete commits the work in the tree (harness files excluded) and marks
// the claim t completed.
func (w *Worker) complete(t state.Task, tree Tree) (*Outcome, error) {
	hash, made, err := w.commitWork(t, tree)
	if err != nil {
		return nil, err
	}
	now := w.Now()
	o := &Outcome{Completed: true, Commit: hash, NewCommit: made, Tree: tree}
	exclusive := false
	_, err = statecache.Update(w.Root, func(s *state.State) error {
		cur := s.Task(t.ID)
		if !sameClaim(cur, &t) {
			return w.moved(s, cur, &t)
		}
		cur.Status = state.Completed
		cur.CompletedAt = stamp(now)
		clearClaim(cur)
		o.Task = *cur
		exclusive = !s.Concurrent()
		return progress.Append(w.Root, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Completed, TaskID: t.ID,
			Message: fmt.Sprintf("(commit %s)", git.Short(hash))})
	})
	if err != nil {
		if fe := (*failure.Error)(nil); errors.As(err, &fe) && made {
			committed := *fe
			committed.Message += fmt.Sprintf("; the work was committed as %s", git.Short(hash))
			err = &committed
		}
		return nil, err
	}
	switch {
	case w.Person:
		// A person's terminal (or script) ran the check: done as they saw it.
		record.Of(w.Root).Verified(t.ID)
	case !record.Trusted() && exclusive:
		// The check ran in a process the agent started: the verification
		// gate runs it again at the next turn end, because the record says
		// so, whatever the log or the runtime files then say. (In
		// concurrent mode each worker's gate runs its own completions, which
		// only the log's claims tell apart.)
		record.Of(w.Root).AddUnverified(t.ID)
	}
	return o, nil
}

// Fail records a failure the agent found itself (category one of
// failure.Categories) for its in-progress task id, with the same bookkeeping
// and rollback as a failed validation.
func (w *Worker) Fail(ctx context.Context, id, category, message string) (*Outcome, error) {
	if !slices.Contains(failure.Categories, category) {
		return nil, failure.New(failure.Usage, "unknown category %q", category).
			WithHint("use one of %s", strings.Join(failure.Categories, ", "))
	}
	if strings.TrimSpace(message) == "" {
		return nil, failure.New(failure.Usage, "empty failure message").WithHint("say what went wrong: harness fail %s --category %s \"Redis connection refused\"", failure.ShellArg(id), category)
	}
	s, t, err := w.load(id)
	if err != nil {
		return nil, err
	}
	if err := w.own(s, t); err != nil {
		return nil, err
	}
	if err := w.checkSession(s); err != nil {
		return nil, err
	}
	tree, err := w.Tree(s)
	if err != nil {
		return nil, err
	}
	return w.fail(ctx, *t, tree, category, message, true)
}

// fail records a failed attempt of claim t (attempts+1, error_log, failed_at,
// status failed; at max_attempts when started_at_commit is gone), then, with
// rollback, snapshots the tree and rolls it back to started_at_commit, then
// runs on_failure.cleanup.
func (w *Worker) fail(ctx context.Context, t state.Task, tree Tree, category, message string, rollback bool) (*Outcome, error) {
	message = progress.OneLine(message)
	f := &Failure{Category: category, Message: message, Base: t.StartedAtCommit,
		BaseMissing: !git.CommitExists(tree.Top, t.StartedAtCommit)}
	now := w.Now()
	o := &Outcome{Failure: f, Tree: tree}
	var session int
	_, err := statecache.Update(w.Root, func(s *state.State) error {
		cur := s.Task(t.ID)
		if !sameClaim(cur, &t) {
			return w.moved(s, cur, &t)
		}
		session = s.SessionCount
		markFailed(cur, now, category, message)
		log := []progress.Entry{{Time: now, Session: s.SessionCount, Type: progress.Error, TaskID: t.ID, Category: category, Message: message}}
		if f.BaseMissing {
			// Nothing to roll back to: retrying could not start clean.
			cur.Attempts = max(cur.Attempts, cur.MaxAttempts)
			if missing := fmt.Sprintf("started_at_commit %s missing", orNull(t.StartedAtCommit)); message != missing {
				cur.ErrorLog = append(cur.ErrorLog, "["+failure.TaskExec+"] "+missing)
				log = append(log, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Error, TaskID: t.ID, Category: failure.TaskExec, Message: missing})
			}
		}
		f.Permanent = cur.PermanentlyFailed()
		for i := range s.Tasks {
			if slices.Contains(s.Tasks[i].DependsOn, t.ID) {
				f.Dependents = append(f.Dependents, s.Tasks[i].ID)
			}
		}
		o.Task = *cur
		return progress.Append(w.Root, log...)
	})
	if err != nil {
		return nil, err
	}
	switch {
	case rollback:
		w.rollback(o, tree, session)
	case f.BaseMissing:
		f.NotRolledBack = fmt.Sprintf("started_at_commit %s does not exist; the work tree was left as it is", orNull(f.Base))
	default:
		f.NotRolledBack = "nothing to roll back"
	}
	if o.Task.Cleanup != "" {
		fc := fence.Open(w.Project())
		r := fc.Run(ctx, tree.Dir, o.Task.Cleanup, w.CleanupTimeout)
		f.Cleanup = &r
		if fence := fc.Close(fmt.Sprintf("on_failure.cleanup of %s (`%s`)", t.ID, o.Task.Cleanup)); fence.Tampered() {
			f.CleanupFence = &fence
		}
		if r.Outcome != validation.Pass {
			w.logLocked(progress.Entry{Time: w.Now(), Session: session, Type: progress.Warn, TaskID: t.ID,
				Message: fmt.Sprintf("on_failure.cleanup %s: %s", r.Outcome, r.FirstLine)})
		}
	}
	return o, nil
}

// rollback saves the tree as a snapshot and resets it to the attempt's base,
// logging what it did. A failure to snapshot cancels the reset: nothing is
// ever lost to a rollback.
func (w *Worker) rollback(o *Outcome, tree Tree, session int) {
	f, t := o.Failure, &o.Task
	msg := fmt.Sprintf("harness snapshot of %s attempt %d before rollback to %s\n\n[%s] %s", t.ID, t.Attempts, git.Short(f.Base), f.Category, f.Message)
	ref, _, err := git.Snapshot(tree.Top, w.Root, git.SnapshotRef(t.ID, t.Attempts), msg)
	entry := progress.Entry{Time: w.Now(), Session: session, TaskID: t.ID}
	switch {
	case err != nil:
		f.NotRolledBack = "the snapshot failed, so the work tree was left as it is: " + err.Error()
		entry.Type, entry.Message = progress.Warn, "rollback skipped: "+f.NotRolledBack
	case f.BaseMissing:
		f.Snapshot = ref
		f.NotRolledBack = fmt.Sprintf("started_at_commit %s does not exist; the work tree was left as it is (saved as %s)", orNull(f.Base), ref)
		entry.Type, entry.Message = progress.Warn, "rollback skipped: "+f.NotRolledBack
	default:
		f.Snapshot = ref
		if err := git.Rollback(tree.Top, w.Root, f.Base); err != nil {
			f.NotRolledBack = "git failed: " + err.Error()
			entry.Type, entry.Message = progress.Warn, fmt.Sprintf("rollback to %s failed (work saved as %s): %v", git.Short(f.Base), ref, err)
		} else {
			f.RolledBack = true
			// The protocol's line exactly; the snapshot is listed by
			// `harness snapshots ID` (and printed by the verb).
			entry.Type, entry.Message = progress.Rollback, "git reset --hard "+git.Short(f.Base)
		}
	}
	w.logLocked(entry)
}

// outOfScope lists the files the attempt changed since started_at_commit
// (git knows them exactly: modified, added, deleted, renamed, untracked)
// that lie outside t's allowed_paths; none when the task has no scope or
// git cannot tell.
func outOfScope(tree Tree, stateRoot string, t *state.Task) []string {
	if len(t.AllowedPaths) == 0 || t.StartedAtCommit == "" {
		return nil
	}
	changed, err := git.ChangedSince(tree.Top, t.StartedAtCommit, stateRoot)
	if err != nil {
		return nil
	}
	var outside []string
	for _, path := range changed {
		if !scope.Match(t.AllowedPaths, path) {
			outside = append(outside, path)
		}
	}
	return outside
}

// listFiles names up to five files, then how many more.
func listFiles(files []string) string {
	const shown = 5
	if len(files) <= shown {
		return strings.Join(files, ", ")
	}
	return fmt.Sprintf("%s (+%d more)", strings.Join(files[:shown], ", "), len(files)-shown)
}
