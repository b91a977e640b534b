package taskcycle

// Workers and the merge queue (session_config.integration_branch set, in
// concurrent mode). Each worker works in its own git worktree on its own
// branch; a claim starts it from the integration branch's tip; a task whose
// validation passes there is queued, not completed. The integrator, one task
// at a time under the merge lock, rebases the task's commits onto the
// current tip in a scratch work tree, runs the task's validation and the
// integration check on the merged tree, and only then fast-forwards the
// integration branch and completes the task. A conflict or a failure after
// the merge fails the attempt [MERGE]; the worker retries from the new tip.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/fence"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/remote"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/validation"
)

// WorkersDir is where the workers' worktrees and the merge queue's scratch
// tree of the state root live: $HARNESS_WORKTREES/<project>-<hash>, else
// under $XDG_DATA_HOME/harness/worktrees (~/.local/share/…). Outside the
// project's tree, so its tools and globs never see them.
func WorkersDir(stateRoot string) string {
	base := os.Getenv("HARNESS_WORKTREES")
	if base == "" {
		data := os.Getenv("XDG_DATA_HOME")
		if data == "" {
			home, _ := os.UserHomeDir()
			data = filepath.Join(home, ".local", "share")
		}
		base = filepath.Join(data, "harness", "worktrees")
	}
	return filepath.Join(base, filepath.Base(stateRoot)+"-"+lock.Hash(stateRoot)[:8])
}

// RemoteQueueRef holds a queued task's commit on a shared job's remote,
// one per claim generation: a worker whose claim was taken over cannot
// overwrite its successor's.
func RemoteQueueRef(taskID string, gen int) string {
	return fmt.Sprintf("refs/harness/queued/%s/g%d", git.RefName(taskID), gen)
}

// errTipMoved: the integration branch or the queue moved on the remote
// while a batch was taken or checked; drain takes the queue again and runs
// it on the new tip.
var errTipMoved = errors.New("the integration branch moved on the remote")

// FollowRemote moves the local integration branch up to tip, the remote's,
// when it is behind (a fast-forward, the main tree's files following when
// it has the branch checked out). A branch with commits of its own, or a
// main tree whose changes block it, stays: best effort, the merge queue
// works from the remote's tip either way.
func FollowRemote(mainTop, branch, tip string) error {
	local := git.RefHead(mainTop, "refs/heads/"+branch)
	if tip == "" || local == tip || local != "" && !git.IsAncestor(mainTop, local, tip) {
		return nil
	}
	if local == "" {
		return git.SetRef(mainTop, "refs/heads/"+branch, tip)
	}
	return git.FastForward(mainTop, branch, local, tip)
}

// QueueRef holds a queued task's validated commit, so that the worker's
// next claim (which resets its branch to the tip) cannot lose it.
func QueueRef(taskID string) string { return "refs/harness/queue/" + git.RefName(taskID) }

// startFromTip puts the worker's tree at the integration branch's tip
// before a claim, saving any uncommitted work as a snapshot first. Nothing
// is reset while the worker still holds a task it has not finished.
func (w *Worker) startFromTip(s *state.State, tree Tree) error {
	mainTop, err := git.Top(w.Root)
	if err != nil {
		return err
	}
	if tree.Top == mainTop {
		return failure.New(failure.Usage, "this job runs with workers (integration branch %s): tasks are claimed in a worker's worktree, not in the main tree", s.Config.IntegrationBranch).
			WithHint("start them with `harness workers N`; work in the main tree would bypass the merge queue")
	}
	if w.Busy(s) != nil {
		return nil // the claim refuses it, with the task to finish
	}
	tip := git.RefHead(tree.Top, "refs/heads/"+s.Config.IntegrationBranch)
	if tip == "" {
		return failure.New(failure.EnvSetup, "the integration branch %s does not exist", s.Config.IntegrationBranch).
			WithHint("a person sets it again with `harness workers N` from the main tree on the branch to integrate into")
	}
	dirty, _ := git.Changes(tree.Top, w.Root)
	if len(dirty) == 0 && git.Head(tree.Top) == tip {
		return nil
	}
	if len(dirty) > 0 {
		ref := fmt.Sprintf("refs/harness/snapshots/worker/%s/%s", git.RefName(w.ID), w.Now().UTC().Format("20060102T150405Z"))
		if _, _, err := git.Snapshot(tree.Top, w.Root, ref, "harness snapshot of "+w.ID+"'s tree before it starts from the integration tip"); err != nil {
			return failure.Wrap(failure.EnvSetup, err, "cannot save the worker's uncommitted work before starting from the tip: %v", err)
		}
	}
	if err := git.Rollback(tree.Top, w.Root, tip); err != nil {
		return failure.Wrap(failure.EnvSetup, err, "cannot put the worker's tree at the integration tip %s: %v", git.Short(tip), err)
	}
	return nil
}

// queue records claim t, whose validation passed in the worker's tree, as
// waiting in the merge queue: its work committed in the tree, the commit
// kept by a ref.
func (w *Worker) queue(t state.Task, tree Tree) (*Outcome, error) {
	hash, made, err := w.commitWork(t, tree)
	if err != nil {
		return nil, err
	}
	if err := git.SetRef(tree.Top, QueueRef(t.ID), hash); err != nil {
		return nil, failure.Wrap(failure.EnvSetup, err, "cannot keep %s's commit for the merge queue: %v", t.ID, err)
	}
	if rc, ok := state.Shared(w.Root); ok {
		// On the remote too: were this machine to die, another one
		// integrates the task from there.
		if err := rc.Push(w.Root, remote.Update{Ref: RemoteQueueRef(t.ID, t.Generation), New: hash, Force: true}); err != nil {
			if errors.Is(err, remote.ErrRefused) {
				return nil, failure.Wrap(failure.EnvSetup, err, "the job's remote %s refused %s's commit (%v): %s was not queued", rc.Remote, t.ID, err, t.ID).
					WithHint("the work is committed in this tree; run `harness validate %s` again once the remote takes pushes (this machine must be allowed to push refs/harness/* to %s)", failure.ShellArg(t.ID), rc.Remote)
			}
			return nil, failure.Wrap(failure.EnvSetup, err, "the job's remote %s cannot be reached (%v): %s was not queued", rc.Remote, err, t.ID).
				WithHint("the work is committed in this tree; run `harness validate %s` again when the remote answers", failure.ShellArg(t.ID))
		}
	}
	now := w.Now()
	o := &Outcome{Commit: hash, NewCommit: made, Tree: tree, Queued: true}
	_, err = statecache.Update(w.Root, func(s *state.State) error {
		cur := s.Task(t.ID)
		if !sameClaim(cur, &t) {
			return w.moved(s, cur, &t)
		}
		cur.ValidatedCommit, cur.ValidatedAt = hash, stamp(now)
		o.Task = *cur
		return progress.Append(w.Root, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Merge, TaskID: t.ID,
			Message: fmt.Sprintf("queued: validation passed in %s's tree (commit %s, base %s)", w.ID, git.Short(hash), git.Short(t.StartedAtCommit))})
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// Integration is what the merge queue did with one task.
type Integration struct {
	Task      state.Task
	Merged    string             // the integration branch's new tip
	Failure   *Failure           // failed [MERGE]
	Check     *validation.Result // the failing check, when one failed
	Conflicts []string           // the files a conflict is in
}

// Integrate runs the merge queue until it is empty: every task waiting in
// it, oldest first, one at a time under the merge lock, waiting up to wait
// for the lock. When another process holds it, Integrate returns at once
// with nothing done: that integrator drains the queue, this task included
// (it looks again after releasing the lock, so a task queued just as it
// finished is not left behind). It returns what it did with each task.
func (w *Worker) Integrate(ctx context.Context, wait time.Duration) ([]Integration, error) {
	var done []Integration
	for {
		unlock, err := lock.Merge(w.Root, wait)
		if err != nil {
			if wait > 0 {
				return done, failure.Wrap(failure.EnvSetup, err, "the merge queue is busy: %v", err).
					WithHint("another integration is running; it takes the queued tasks too")
			}
			return done, nil
		}
		more, err := w.drain(ctx)
		done = append(done, more...)
		unlock()
		if err != nil {
			return done, err
		}
		s, err := state.Load(w.Root)
		if err != nil || len(Queue(s)) == 0 || ctx.Err() != nil {
			return done, err
		}
		wait = 0 // queued while this one drained: take it if nobody else does
	}
}

// drain integrates the queued tasks, each at most once; the caller holds
// the merge lock. Several queued tasks are tried together first, as one
// batch (see integrate); a batch that does not go through is taken apart,
// one task at a time, so a conflict or a failure is blamed on the task
// that causes it.
func (w *Worker) drain(ctx context.Context) ([]Integration, error) {
	var done []Integration
	tried := map[string]bool{}
	for ctx.Err() == nil {
		s, err := state.Load(w.Root)
		if err != nil {
			return done, err
		}
		q := queuedTasks(s, tried)
		if len(q) == 0 {
			return done, nil
		}
		if len(q) > 1 {
			ins, whole, err := w.integrate(ctx, s, q)
			if errors.Is(err, errTipMoved) {
				continue // again, on the new tip
			}
			if err != nil {
				return done, err
			}
			if whole {
				for _, t := range q {
					tried[t.ID] = true
				}
				done = append(done, ins...)
				continue
			}
		}
		ins, _, err := w.integrate(ctx, s, q[:1])
		if errors.Is(err, errTipMoved) {
			continue
		}
		tried[q[0].ID] = true
		done = append(done, ins...)
		if err != nil {
			return done, err
		}
	}
	return done, ctx.Err()
}

// Queue lists the tasks waiting in the merge queue, longest waiting
// first.
func Queue(s *state.State) []state.Task { return queuedTasks(s, nil) }

// queuedTasks is Queue without the tasks tried.
func queuedTasks(s *state.State, tried map[string]bool) []state.Task {
	var q []state.Task
	// On a job shared through a remote each machine integrates its own
	// workers' tasks: their commits are in its repository alone.
	// Another machine's task is taken over when it has waited a lease:
	// that machine is gone (its commit is on the remote's queue ref).
	own, clone, stale := "", "", time.Time{}
	if rc, ok := state.Shared(s.Dir); ok {
		own, clone, stale = rc.Machine+"-", rc.Clone, time.Now().Add(-LeaseFromEnv())
	}
	for i := range s.Tasks {
		t := &s.Tasks[i]
		theirs := !strings.HasPrefix(t.ClaimedBy, own) || t.ClaimedClone != "" && t.ClaimedClone != clone
		if own != "" && theirs {
			if at, err := time.Parse(time.RFC3339, t.ValidatedAt); err == nil && at.After(stale) {
				continue
			}
		}
		if t.Validated() && !tried[t.ID] {
			q = append(q, *t)
		}
	}
	slices.SortStableFunc(q, func(a, b state.Task) int { return strings.Compare(a.ValidatedAt, b.ValidatedAt) })
	return q
}

// integrate integrates the queued tasks ts as one: each one's commits
// rebased in turn onto the integration branch's tip in the scratch tree,
// then every task's validation run on the result (side by side, for a
// batch) and the integration check once, and only then the branch
// fast-forwarded to it and the tasks completed, each with its own commit
// of the now linear history. So each task is validated on the very tree
// that becomes the tip. For one task a conflict or a failed check fails
// it [MERGE]; for a batch, whole is false and nothing is recorded (the
// caller takes it apart). A nil Integration for a single task means it
// left the queue meanwhile.
func (w *Worker) integrate(ctx context.Context, s *state.State, ts []state.Task) (done []Integration, whole bool, err error) {
	mainTop, err := git.Top(w.Root)
	if err != nil {
		return nil, false, err
	}
	branch := s.Config.IntegrationBranch
	tip := git.RefHead(mainTop, "refs/heads/"+branch)
	_, shared := state.Shared(w.Root)
	if shared {
		// The tip is the remote's: the push that completes the tasks
		// moves it only if no other machine moved it first. Another
		// machine's tasks, taken over, have their commits on the remote's
		// queue refs: fetched with the state and the tip, in one go.
		refs := []string{"refs/heads/" + branch}
		for _, t := range ts {
			if !git.CommitExists(mainTop, t.ValidatedCommit) {
				refs = append(refs, RemoteQueueRef(t.ID, t.Generation))
			}
		}
		heads, err := state.Sync(w.Root, refs...)
		if err != nil {
			return nil, false, err
		}
		tip = heads["refs/heads/"+branch]
		FollowRemote(mainTop, branch, tip)
		// The tasks as the state just fetched has them: another machine
		// may have integrated one meanwhile, and removed its commit from
		// the remote. The caller takes the queue again from that state.
		cur, err := state.Load(w.Root)
		if err != nil {
			return nil, false, err
		}
		for i := range ts {
			if !sameQueued(cur.Task(ts[i].ID), &ts[i]) {
				return nil, false, errTipMoved
			}
		}
	}
	if tip == "" {
		return nil, false, failure.New(failure.EnvSetup, "the integration branch %s does not exist", branch)
	}
	scratch := filepath.Join(WorkersDir(w.Root), "integration")
	if err := git.ScratchTree(mainTop, scratch, tip); err != nil {
		return nil, false, failure.Wrap(failure.EnvSetup, err, "cannot prepare the merge queue's tree %s: %v", scratch, err)
	}
	single := len(ts) == 1
	fail := func(in *Integration, message string) ([]Integration, bool, error) {
		if !single {
			return nil, false, nil
		}
		in, err := w.mergeFailed(in, message)
		if in == nil {
			return nil, true, err
		}
		return []Integration{*in}, true, err
	}
	head := tip
	merged := make([]string, len(ts))
	for i := range ts {
		t := &ts[i]
		c, conflicts, err := git.Rebase(scratch, t.StartedAtCommit, t.ValidatedCommit, head)
		if err != nil {
			return nil, false, failure.Wrap(failure.EnvSetup, err, "cannot rebase %s onto %s: %v", t.ID, branch, err)
		}
		if len(conflicts) > 0 {
			return fail(&Integration{Task: *t, Conflicts: conflicts}, fmt.Sprintf("conflict rebasing onto %s at %s in %s", branch, git.Short(tip), listFiles(conflicts)))
		}
		head, merged[i] = c, c
	}
	dir := scratch
	if rel, err := filepath.Rel(mainTop, w.Root); err == nil && rel != "." {
		dir = filepath.Join(scratch, rel)
	}
	var ids []string
	for _, t := range ts {
		ids = append(ids, t.ID)
	}
	f := fence.Open(w.Project())
	jobs := make([]validation.Job, len(ts))
	for i := range ts {
		jobs[i] = validation.Job{Command: ts[i].Command, Timeout: ts[i].Timeout()}
	}
	var checks []mergeCheck
	passed := true
	for i, r := range f.RunAll(ctx, dir, jobs) {
		checks = append(checks, mergeCheck{&ts[i], "the validation `" + ts[i].Command + "`", r.Result})
		passed = passed && r.Outcome == validation.Pass
	}
	if c := strings.TrimSpace(s.Config.IntegrationCheck); c != "" && ctx.Err() == nil && passed {
		r := f.Run(ctx, dir, c, s.Config.IntegrationTimeout())
		checks = append(checks, mergeCheck{&ts[len(ts)-1], "the integration check `" + c + "`", r})
	}
	if fence := f.Close(fmt.Sprintf("the checks of %s on the merged tree", strings.Join(ids, ", "))); fence.Tampered() {
		r := checks[0].r
		return fail(&Integration{Task: ts[0], Check: &r}, "the checks on the merged tree changed harness files, which were put back: "+fence.Files())
	}
	if ctx.Err() != nil {
		return nil, false, failure.New(failure.TaskExec, "integration of %s interrupted: it stays queued", strings.Join(ids, ", "))
	}
	for _, c := range checks {
		if c.r.Outcome == validation.Missing {
			return nil, false, failure.New(failure.EnvSetup, "%s of %s on the merged tree: command not found: %s", c.what, c.task.ID, c.r.FirstLine).
				WithHint("install what it needs; the task stays queued")
		}
		if c.r.Outcome != validation.Pass {
			r := c.r
			return fail(&Integration{Task: *c.task, Check: &r}, fmt.Sprintf("after the merge onto %s at %s, %s %s: %s", branch, git.Short(tip), c.what, c.r.Outcome, c.r.FirstLine))
		}
	}
	now := w.Now()
	_, err = statecache.Update(w.Root, func(s *state.State) error {
		for i := range ts {
			if cur := s.Task(ts[i].ID); !sameQueued(cur, &ts[i]) {
				if single && cur != nil {
					w.logRefusal(s, ts[i].ID, "the merge queue", ts[i].Generation, cur)
				}
				whole = single
				return nil
			}
		}
		if shared {
			s.PublishRef("refs/heads/"+branch, tip, head)
		} else if err := git.FastForward(mainTop, branch, tip, head); err != nil {
			return failure.Wrap(failure.EnvSetup, err, "cannot move %s to the merged %s: %v", branch, git.Short(head), err).
				WithHint("the tasks stay queued; `harness integrate` tries again (a main tree with uncommitted changes to the same files blocks a fast-forward)")
		}
		note := checkNote(s)
		if !single {
			note += fmt.Sprintf("; integrated together with %s", strings.Join(ids, ", "))
		}
		var log []progress.Entry
		for i := range ts {
			cur := s.Task(ts[i].ID)
			cur.Status = state.Completed
			cur.CompletedAt = stamp(now)
			cur.IntegratedCommit = merged[i]
			clearClaim(cur)
			done = append(done, Integration{Task: *cur, Merged: merged[i]})
			log = append(log,
				progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Merge, TaskID: cur.ID,
					Message: fmt.Sprintf("integrated into %s as %s (validated on the merged tree%s)", branch, git.Short(merged[i]), note)},
				progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Completed, TaskID: cur.ID,
					Message: fmt.Sprintf("(commit %s)", git.Short(merged[i]))})
		}
		whole = true
		return progress.Append(w.Root, log...)
	})
	if errors.Is(err, state.ErrRefMoved) {
		// Another machine integrated first: the checks ran on a tree that
		// is no longer the tip's. The caller runs them again on the new one.
		return nil, false, errTipMoved
	}
	if err != nil {
		return nil, false, err
	}
	if shared && len(done) > 0 {
		FollowRemote(mainTop, branch, head)
	}
	var gone []remote.Update
	for _, in := range done {
		git.SetRef(mainTop, QueueRef(in.Task.ID), "")
		gone = append(gone, remote.Update{Ref: RemoteQueueRef(in.Task.ID, in.Task.Generation), Force: true})
	}
	if rc, ok := state.Shared(w.Root); ok && len(gone) > 0 {
		rc.Push(mainTop, gone...) // tidying: a ref left behind costs nothing
	}
	return done, whole, nil
}

// mergeCheck is one check run on the merged tree: whose it is (the task
// blamed when it fails) and what it ran.
type mergeCheck struct {
	task *state.Task
	what string
	r    validation.Result
}

func checkNote(s *state.State) string {
	if strings.TrimSpace(s.Config.IntegrationCheck) != "" {
		return "; integration_check passed"
	}
	return ""
}

// sameQueued reports whether t is still the queued claim snapshot.
func sameQueued(t, snapshot *state.Task) bool {
	return sameClaim(t, snapshot) && t.ValidatedCommit == snapshot.ValidatedCommit
}

// mergeFailed records a failed attempt [MERGE] for the queued task of in.
// The worker's tree is not touched (its worker may be on another task): the
// queued commit is kept as the attempt's snapshot, and the worker's next
// claim starts again from the tip.
func (w *Worker) mergeFailed(in *Integration, message string) (*Integration, error) {
	t := in.Task
	message = progress.OneLine(message)
	mainTop, _ := git.Top(w.Root)
	f := &Failure{Category: failure.Merge, Message: message, Base: t.StartedAtCommit,
		NotRolledBack: "the worker's tree is left as it is; its next claim starts from the integration tip"}
	now := w.Now()
	_, err := statecache.Update(w.Root, func(s *state.State) error {
		cur := s.Task(t.ID)
		if !sameQueued(cur, &t) {
			if cur != nil {
				w.logRefusal(s, t.ID, "the merge queue", t.Generation, cur)
			}
			in = nil
			return nil
		}
		markFailed(cur, now, failure.Merge, message)
		f.Permanent = cur.PermanentlyFailed()
		ref := git.SnapshotRef(t.ID, cur.Attempts)
		if git.SetRef(mainTop, ref, t.ValidatedCommit) == nil {
			f.Snapshot = ref
		}
		in.Task = *cur
		in.Failure = f
		return progress.Append(w.Root, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Error, TaskID: t.ID, Category: failure.Merge, Message: message})
	})
	if err != nil {
		return nil, err
	}
	if in != nil {
		git.SetRef(mainTop, QueueRef(t.ID), "")
	}
	return in, nil
}

// queueAndIntegrate queues claim t, whose validation passed in the
// worker's tree, then, unless a `harness workers` supervisor runs (it
// integrates), runs the merge queue, and returns the outcome for t:
// completed once integrated, failed [MERGE], or still queued.
func (w *Worker) queueAndIntegrate(ctx context.Context, t state.Task, tree Tree) (*Outcome, error) {
	o, err := w.queue(t, tree)
	if err != nil {
		return nil, err
	}
	if lock.WorkersRunning(w.Root) {
		// The supervisor integrates: the queue's verdict is given in a
		// person's process, not in the agent's, and a long integration
		// check never runs inside a worker's tool call.
		o.Supervised = true
		return o, nil
	}
	done, err := w.Integrate(ctx, 0)
	for _, in := range done {
		if in.Task.ID != t.ID {
			continue
		}
		o.Task, o.Integration, o.Queued = in.Task, &in, false
		if in.Failure != nil {
			o.Failure = in.Failure
		} else {
			o.Completed = true
		}
		return o, nil
	}
	o.QueueErr = err
	return o, nil
}
