// Package workers runs many agents on one job: `harness workers N`, a
// supervisor that gives each of N workers its own git worktree (outside the
// project's tree) on its own branch and runs one headless Claude Code
// session at a time in each, with the state root pinned and the worker's id
// set. A worker whose session ends while work remains gets a new one; all
// stop when the job is done, paused, cancelled or over budget. The merge
// queue (taskcycle.Integrate) integrates what they validate, run by the
// supervisor alone while it runs.
package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/remote"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/taskcycle"
)

// Prompt is what each worker session is started with: the skill's run.
const Prompt = "/harness run"

// SandboxedPrompt is the prompt of a worker whose commands run in Claude
// Code's sandbox (Options.MCP): its harness commands cannot write the job's
// state, so the task cycle goes through the harness's MCP tools.
const SandboxedPrompt = "/harness run. Your commands run sandboxed, where the harness command cannot write the job: for the task cycle use the harness MCP tools instead (mcp__harness__claim, mcp__harness__checkpoint, mcp__harness__validate, mcp__harness__fail, mcp__harness__status); work on the files with your other tools as usual."

// Options configures a supervisor.
type Options struct {
	Root   string   // the state root (the main tree)
	N      int      // how many workers
	Claude string   // the Claude Code executable
	Args   []string // a person's arguments for claude, before -p
	Out    io.Writer
	Poll   time.Duration
	Now    func() time.Time
	// Shared: the job is shared through a git remote with other
	// machines (harness workers N --remote NAME); nil on one machine.
	Shared *remote.Config
	// MCP, when set, is the harness executable each worker's session runs
	// as its MCP server (`harness mcp`): at the sandboxed level the
	// worker's own commands cannot write the job's state or the main
	// repository, and Claude Code runs MCP servers outside its sandbox.
	MCP string
}

// ID is the worker id of worker k (1-based): what HARNESS_WORKER_ID says
// and claimed_by records.
func ID(k int) string { return fmt.Sprintf("w%d", k) }

// isWorkerID reports whether id is one a supervisor gives.
func isWorkerID(id string) bool {
	if len(id) < 2 || id[0] != 'w' {
		return false
	}
	for _, r := range id[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Tree is where worker id's worktree lives.
func Tree(stateRoot, id string) string { return filepath.Join(taskcycle.WorkersDir(stateRoot), id) }

// Branch is worker id's own branch.
func Branch(id string) string { return "harness/" + id }

// slot is one worker as the supervisor runs it.
type slot struct {
	id, tree string
	cmd      *exec.Cmd
	started  time.Time
	sessions int
	stopped  bool      // by the person: never started again
	notAfter time.Time // restart no sooner than this (a session that ended at once)
	// sittingOut: its session was killed holding a claim; it waits past
	// that claim's lease (sitOut).
	sittingOut bool
	quick      int    // sessions in a row that ended at once without moving the job
	startedAt  string // the job's counts when its session started
	exit       string // how the last session ended
	stopping   bool   // the supervisor is ending its session
}

type exited struct {
	s   *slot
	err error
}

// Supervisor runs the workers of one job.
type Supervisor struct {
	o       Options
	mainTop string // the main tree's top
	branch  string
	slots   []*slot
	exits   chan exited
	integ   chan struct{} // a merge-queue drain is running
	started time.Time
	offline string // why the shared job's remote cannot be reached, "" when it can
	// logPublished: when the supervisor last published the machine's log.
	logPublished time.Time
	// lostName: why another live clone holds this machine's name (it
	// published under it first); the supervisor ends.
	lostName string
}

// followToEnd brings the main tree's branch up to the remote's last tip
// as the supervisor ends: a fast-forward a moment ago may have met a
// worktree's git at work in the repository, and no later poll would try
// again.
func (sv *Supervisor) followToEnd() {
	if sv.o.Shared == nil {
		return
	}
	for try := 0; try < 5; try++ {
		heads, err := state.Sync(sv.o.Root, "refs/heads/"+sv.branch)
		if err == nil && taskcycle.FollowRemote(sv.mainTop, sv.branch, heads["refs/heads/"+sv.branch]) == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	sv.say("harness workers: the main tree's %s could not follow the remote's (`git merge --ff-only %s/%s` does it)", sv.branch, sv.o.Shared.Remote, sv.branch)
}

// publish gives a shared job's remote this machine's log and board: its
// workers and their states (no times, so an unchanged board is not pushed
// again), and why the supervisor ended, once it has.
func (sv *Supervisor) publish(ended string) {
	if sv.o.Shared == nil || sv.lostName != "" {
		return // the name is another live clone's: its ref is left alone
	}
	b := RemoteBoard{Ended: ended, Clone: sv.o.Shared.Clone}
	for _, sl := range sv.slots {
		w := RemoteWorker{ID: sl.id, State: "idle", Sessions: sl.sessions}
		switch {
		case sl.cmd != nil:
			w.State = "running"
		case sl.stopped:
			w.State = "stopped"
		}
		b.Workers = append(b.Workers, w)
	}
	data, _ := json.Marshal(b)
	err := state.PublishLog(sv.o.Root, map[string][]byte{remote.BoardFile(sv.o.Shared.Machine): append(data, '\n')})
	if errors.Is(err, state.ErrMachineMoved) && ended == "" {
		sv.nameTaken()
	}
}

// nameTaken looks at the machine's ref another clone moved: when that
// clone is live (CheckName) two clones started under one name at the same
// instant, and this one, the later to publish, ends before it starts a
// session; else (the other ended, or was this clone before its record was
// lost) the next publication goes on from where the ref is now.
func (sv *Supervisor) nameTaken() {
	if _, err := state.Sync(sv.o.Root, remote.MachineRefs); err != nil {
		return
	}
	if err := CheckName(sv.o.Root, *sv.o.Shared, sv.o.N, sv.o.Now()); err != nil {
		var f *failure.Error
		if errors.As(err, &f) {
			sv.lostName = f.Message
		} else {
			sv.lostName = err.Error()
		}
		return
	}
	state.TakeMachineRef(sv.o.Root)
}

// RemoteBoard is a machine's board as a shared job's remote holds it.
type RemoteBoard struct {
	Ended string `json:"ended,omitempty"`
	// Clone is the id of the clone whose supervisor published it: the
	// machine's name is that clone's while it is live (takeName).
	Clone   string         `json:"clone,omitempty"`
	Workers []RemoteWorker `json:"workers"`
}

// RemoteWorker is one worker on a RemoteBoard.
type RemoteWorker struct {
	ID       string `json:"id"`
	State    string `json:"state"`
	Sessions int    `json:"sessions"`
}

// logEvery is how often a shared job's supervisor publishes the lines
// logged between changes.
const logEvery = 10 * time.Second

// workerID is the id of worker k of this supervisor: on a job shared
// through a remote it names the machine (m1-w2), so that machines never
// share an id.
func (sv *Supervisor) workerID(k int) string {
	if sv.o.Shared != nil {
		return sv.o.Shared.Machine + "-" + ID(k)
	}
	return ID(k)
}

// own reports whether the claim of t is one this supervisor's workers
// made: held by a worker id it gives, and on a shared job made from this
// very clone (the claim carries the clone's id). A claim it cannot prove
// its own is never released by it: if its holder is gone, its lease runs
// out and any machine reaps it.
func (sv *Supervisor) own(t *state.Task) bool {
	if sv.o.Shared != nil {
		rest, ok := strings.CutPrefix(t.ClaimedBy, sv.o.Shared.Machine+"-")
		return ok && isWorkerID(rest) && t.ClaimedClone != "" && t.ClaimedClone == sv.o.Shared.Clone
	}
	return isWorkerID(t.ClaimedBy)
}

// sync brings a shared job's state, integration branch and machines'
// refs from the remote (state.Sync) and this machine's log to it; the main tree's branch
// follows the remote's. While the remote cannot be reached no new session
// starts: a claim could not be published.
func (sv *Supervisor) sync() {
	if sv.o.Shared == nil {
		return
	}
	// The machines' refs too: a claim takes from its machine's share of
	// the tasks among the machines it knows (schedule.ChooseSpread).
	heads, err := state.Sync(sv.o.Root, "refs/heads/"+sv.branch, remote.MachineRefs)
	if err != nil {
		if sv.offline == "" {
			sv.say("harness workers: the remote %s cannot be reached: no new session starts until it answers (%v)", sv.o.Shared.Remote, err)
		}
		sv.offline = err.Error()
		return
	}
	if sv.offline != "" {
		sv.say("harness workers: the remote %s answers again", sv.o.Shared.Remote)
		sv.offline = ""
	}
	// The machine's log goes with each change; lines logged between
	// changes (the supervisor's own) every logEvery, not every poll: each
	// publication is a push the other machines' changes race against.
	if now := sv.o.Now(); now.Sub(sv.logPublished) >= logEvery {
		sv.logPublished = now
		sv.publish("")
	}
	taskcycle.FollowRemote(sv.mainTop, sv.branch, heads["refs/heads/"+sv.branch])
}

// Run supervises the workers until the job is done, paused, cancelled or
// over budget, or until ctx ends (Ctrl-C): then every session is stopped and
// the claims of the tasks they held are released. It returns why it ended.
func Run(ctx context.Context, o Options) (string, error) {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	mainTop, err := git.Top(o.Root)
	if err != nil {
		return "", failure.New(failure.EnvSetup, "harness workers needs the project in a git repository: %v", err)
	}
	branch := git.CurrentBranch(mainTop)
	if branch == "" {
		return "", failure.New(failure.EnvSetup, "the main tree %s is not on a branch (detached HEAD)", mainTop).
			WithHint("check out the branch the workers' work is integrated into (`git switch main`), then run harness workers again")
	}
	unlock, err := lock.Workers(o.Root)
	if err != nil {
		return "", failure.New(failure.EnvSetup, "another `harness workers` runs this job (%v)", err).
			WithHint("stop it first (Ctrl-C in its terminal); one supervisor per job")
	}
	defer unlock()
	sv := &Supervisor{o: o, mainTop: mainTop, branch: branch, exits: make(chan exited, o.N), integ: make(chan struct{}, 1), started: o.Now()}
	for k := 1; k <= o.N; k++ {
		id := sv.workerID(k)
		sv.slots = append(sv.slots, &slot{id: id, tree: Tree(o.Root, id)})
	}
	if err := sv.takeName(); err != nil {
		return "", err
	}
	if err := sv.setUp(); err != nil {
		return "", err
	}
	for _, sl := range sv.slots {
		if err := prepareTree(mainTop, sl.tree, sl.id, branch); err != nil {
			return "", failure.Wrap(failure.EnvSetup, err, "cannot make %s's worktree %s: %v", sl.id, sl.tree, err)
		}
	}
	sv.say("harness workers: %d workers on branch %s (worktrees in %s)", o.N, branch, taskcycle.WorkersDir(o.Root))
	return sv.loop(ctx)
}

// takeName makes the machine's name this clone's on a shared job: refused
// while another clone under the same name is live (CheckName). The name
// is taken with the board the supervisor's first sync publishes.
func (sv *Supervisor) takeName() error {
	if sv.o.Shared == nil {
		return nil
	}
	if _, err := state.Sync(sv.o.Root, remote.MachineRefs); err != nil {
		return err
	}
	return CheckName(sv.o.Root, *sv.o.Shared, sv.o.N, sv.o.Now())
}

// CheckName refuses rc's machine name when another live clone holds it
// (InUse), judged on the state and the machines' refs last fetched into
// dir's repository (remote.MachineRefs): two
// clones under one name would take each other's workers and claims for
// their own. n is the number of workers, for the hint.
func CheckName(dir string, rc remote.Config, n int, now time.Time) error {
	var b RemoteBoard
	if data, ok := remote.MachineFile(dir, rc.Machine, remote.BoardFile(rc.Machine)); ok {
		json.Unmarshal(data, &b)
	}
	last := lastChange(dir, rc.Machine)
	if t := remote.MachineTime(dir, rc.Machine); t.After(last) {
		last = t
	}
	until, inUse := InUse(b, last, rc.Clone, now, taskcycle.LeaseFromEnv())
	if !inUse {
		return nil
	}
	return failure.New(failure.Usage, "the machine name %s is in use by another clone (id %s), whose last change of the job was at %s: two clones under one name would take each other's workers and claims for their own",
		rc.Machine, b.Clone, last.UTC().Format(time.RFC3339)).
		WithHint("give this clone a name of its own: harness workers %d --remote %s --machine NAME (or leave --machine out: this clone's own is %s); if that clone is gone for good, the name is free at %s",
			n, rc.Remote, remote.DefaultMachine(rc.Clone), until.UTC().Format(time.RFC3339))
}

// InUse reports whether a machine's name is another live clone's, judged
// by the board its supervisor last published and when that machine last
// changed the state or published its log: a board of another clone whose
// supervisor has not ended, with a sign of life within the lease (a live
// machine's workers renew their claims within half of it, its supervisor
// publishes its log every logEvery while it grows). until is when the
// name is free if nothing changes.
func InUse(b RemoteBoard, last time.Time, clone string, now time.Time, lease time.Duration) (until time.Time, inUse bool) {
	if b.Clone == "" || b.Clone == clone || b.Ended != "" || last.IsZero() {
		return time.Time{}, false
	}
	until = last.Add(lease)
	return until, now.Before(until)
}

// lastChange is when the machine (or one of its workers) last changed the
// state fetched into dir's repository; zero when never.
func lastChange(dir, machine string) time.Time {
	changes, _ := remote.Changes(dir)
	for i := len(changes) - 1; i >= 0; i-- {
		who, _, _ := strings.Cut(changes[i].Subject, ":")
		if name, _, _ := strings.Cut(who, "-"); name == machine {
			return changes[i].Time
		}
	}
	return time.Time{}
}

// setUp records the job's integration branch and concurrent mode, and
// releases the claims a previous supervisor's workers left (one supervisor
// per job runs at a time, so they are nobody's now).
func (sv *Supervisor) setUp() error {
	now := sv.o.Now()
	var released []string
	_, err := statecache.Update(sv.o.Root, func(s *state.State) error {
		if sv.o.Shared != nil && s.Config.IntegrationBranch != "" && s.Config.IntegrationBranch != sv.branch {
			return failure.New(failure.Usage, "the job integrates into %s, and this machine's main tree is on %s", s.Config.IntegrationBranch, sv.branch).
				WithHint("switch the main tree to it (`git switch %s`), then run harness workers again", s.Config.IntegrationBranch)
		}
		if s.Config.ConcurrencyMode != state.Concurrent {
			s.SetConfig("concurrency_mode", state.Concurrent)
			s.Config.ConcurrencyMode = state.Concurrent
		}
		if s.Config.IntegrationBranch != sv.branch {
			s.SetConfig("integration_branch", sv.branch)
			s.Config.IntegrationBranch = sv.branch
		}
		released = release(s, sv.own)
		log := []progress.Entry{{Time: now, Session: s.SessionCount, Type: progress.Worker,
			Message: fmt.Sprintf("supervisor started: %d workers, integration branch %s", sv.o.N, sv.branch)}}
		for _, r := range released {
			log = append(log, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Lock, Message: r})
		}
		return progress.Append(sv.o.Root, log...)
	})
	for _, r := range released {
		sv.say("%s", r)
	}
	return err
}

// release puts back to pending the tasks in progress (not waiting in the
// merge queue) held by the workers whose ids match, and returns one LOCK
// message per task. No attempt is counted: the worker was stopped, the
// task did not fail; its work is in the worker's tree, saved as a snapshot
// when that worker next claims.
func release(s *state.State, held func(*state.Task) bool) []string {
	var out []string
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if t.Status != state.InProgress || t.Validated() || !held(t) {
			continue
		}
		out = append(out, fmt.Sprintf("%s released: its worker %s was stopped (its tree keeps the work: the worker's next claim saves it as a snapshot)", t.ID, t.ClaimedBy))
		t.Status = state.Pending
		t.ClearClaim()
	}
	return out
}

// prepareTree makes the worker's worktree on its own branch, at the
// integration tip when new. An existing one is kept as it is: its worker's
// next claim saves what it holds and starts from the tip.
func prepareTree(mainTop, tree, id, branch string) error {
	if fi, err := os.Stat(filepath.Join(tree, ".git")); err == nil && !fi.IsDir() {
		if _, err := git.Run(tree, "rev-parse", "--git-dir"); err == nil {
			return nil
		}
		os.RemoveAll(tree)
	}
	git.Run(mainTop, "worktree", "prune")
	if err := os.MkdirAll(filepath.Dir(tree), 0o755); err != nil {
		return err
	}
	_, err := git.Run(mainTop, "worktree", "add", "-q", "-B", Branch(id), tree, branch)
	return err
}

func (sv *Supervisor) say(format string, args ...any) {
	fmt.Fprintf(sv.o.Out, "%s %s\n", sv.o.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// loop is the supervisor's life: start sessions where there is work, see
// them end, drain the merge queue, take a person's stop requests, and write
// what it does where status can read it.
func (sv *Supervisor) loop(ctx context.Context) (string, error) {
	tick := time.NewTicker(sv.o.Poll)
	defer tick.Stop()
	for {
		sv.sync()
		if sv.lostName != "" {
			why := sv.lostName + " (it published under the name first; run this clone under a name of its own)"
			sv.shutdown(why)
			return why, nil
		}
		s, err := state.Load(sv.o.Root)
		if err != nil {
			sv.shutdown("the state could not be read: " + err.Error())
			return "", err
		}
		sv.takeStopRequests()
		why := stopReason(sv.o.Root, s)
		if why == "" {
			why = sv.stuck()
		}
		if why == "" && sv.offline == "" {
			sv.startWhereWork(s)
		}
		if sv.batchReady(s) {
			sv.drain(ctx)
		}
		running := sv.running()
		if running == 0 && len(sv.integ) == 0 && len(taskcycle.Queue(s)) == 0 {
			// No work left says more than a stop reason: the last
			// session's Stop hook switches a finished job off.
			if !work(s) {
				why = finished(s)
			}
			if why != "" {
				sv.writeStatus(why)
				sv.logf(s, "supervisor ended: %s", why)
				sv.publish(why)
				sv.followToEnd()
				sv.say("harness workers: %s", why)
				return why, nil
			}
		}
		sv.writeStatus("")
		select {
		case <-ctx.Done():
			why := "stopped by the person (interrupt)"
			sv.shutdown(why)
			return why, nil
		case ex := <-sv.exits:
			sv.ended(ex)
		case <-tick.C:
		}
	}
}

// stopReason says why no new session may start: the job paused, cancelled
// (the hooks switched off) or over budget; "" when sessions may start.
func stopReason(dir string, s *state.State) string {
	if m, _ := record.Of(dir).Mark(); root.Paused(dir) || m.Paused != "" {
		return "paused by the person (`harness resume` continues)"
	}
	if !root.Active(dir) {
		return "the job is cancelled or switched off (no .harness-active)"
	}
	if s.Config.Budget.Any() {
		for _, l := range budget.Measure(s.Config.Budget, budget.Total(record.Of(dir), nil), nil) {
			if l.Over() {
				return "over budget: " + l.String()
			}
		}
	}
	return ""
}

// finished says how a job with no work left ended.
func finished(s *state.State) string {
	st := schedule.Count(s.Tasks)
	if st.Completed == st.Total {
		return fmt.Sprintf("job done: all %d tasks integrated", st.Total)
	}
	return fmt.Sprintf("no work left that a worker can do (%s): %s", st.Counts(), schedule.Explain(s.Tasks))
}

// batchWait is how long the supervisor lets a queued task wait for others
// to join its batch while workers are still at work.
const batchWait = 2 * time.Second

// batchReady reports whether the merge queue should run now: something
// waits in it, and either every running session's worker has queued (or
// holds nothing), or the oldest waiting task has waited batchWait. Tasks
// validated at about the same time then go in one batch: their checks on
// the merged tree run side by side instead of one after the other. A
// shared job's queue waits while its remote cannot be reached: every
// integration starts with a fetch.
func (sv *Supervisor) batchReady(s *state.State) bool {
	q := taskcycle.Queue(s)
	if len(q) == 0 || sv.offline != "" {
		return false
	}
	working := 0
	for _, sl := range sv.slots {
		if sl.cmd != nil && holds(s, sl.id) {
			working++
		}
	}
	if working == 0 {
		return true
	}
	at, err := time.Parse(time.RFC3339, q[0].ValidatedAt)
	return err != nil || sv.o.Now().Sub(at) >= batchWait
}

// work reports whether any worker has something to do: a claim not yet
// validated (its worker's, or anyone's once its lease expired), or an
// eligible task with a check.
func work(s *state.State) bool {
	for i := range s.Tasks {
		// A validated task is this supervisor's queue, or on a job shared
		// through a remote another machine's: either way not done yet.
		if t := &s.Tasks[i]; t.Status == state.InProgress {
			return true
		}
	}
	return eligible(s) > 0
}

// eligible counts the tasks a claim could take now.
func eligible(s *state.State) int {
	n := 0
	for _, t := range schedule.Candidates(s.Tasks) {
		if strings.TrimSpace(t.Command) != "" {
			n++
		}
	}
	return n
}

// startWhereWork starts a session for each idle worker with work to do:
// first the workers holding an unfinished claim, then as many more as
// there are eligible tasks not being worked on.
func (sv *Supervisor) startWhereWork(s *state.State) {
	now := sv.o.Now()
	free := eligible(s)
	for _, sl := range sv.slots {
		if sl.cmd != nil && !holds(s, sl.id) {
			free-- // about to claim one
		}
	}
	order := slices.Clone(sv.slots)
	slices.SortStableFunc(order, func(a, b *slot) int { return boolInt(holds(s, b.id)) - boolInt(holds(s, a.id)) })
	lapsed := lastLapse(s, now)
	for _, sl := range order {
		if sl.cmd != nil || sl.stopped {
			continue
		}
		// A claim whose lease ran out since the worker's last session
		// started is a new event: a worker backing off after quick
		// sessions may take it at once. Once: a session that could not
		// take it (its claim refused by the remote) ends at once too, and
		// trying again at every poll would spin through the sessions the
		// supervisor gives up after. One sitting out its own killed
		// session's lease waits, so that a peer takes the task.
		if now.Before(sl.notAfter) && (sl.sittingOut || !lapsed.After(sl.started)) {
			continue
		}
		switch {
		case holds(s, sl.id):
		case free > 0 || !lapsed.IsZero():
			free--
		default:
			continue
		}
		sl.sittingOut = false
		if err := sv.start(sl); err != nil {
			sv.say("%s: cannot start a session: %v", sl.id, err)
			sl.notAfter = now.Add(30 * time.Second)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// holds reports whether worker id holds an unfinished claim whose lease
// runs (one that ran out is anyone's to take).
func holds(s *state.State, id string) bool {
	now := time.Now()
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if t.Status == state.InProgress && !t.Validated() && t.ClaimedBy == id && !t.LeaseExpired(now) {
			return true
		}
	}
	return false
}

// lastLapse is when the last claim whose lease has run out by now ran
// out; zero when none has.
func lastLapse(s *state.State, now time.Time) time.Time {
	var last time.Time
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if t.Status != state.InProgress || t.Validated() || !t.LeaseExpired(now) {
			continue
		}
		if exp, err := time.Parse(time.RFC3339, t.LeaseExpiresAt); err == nil && exp.After(last) {
			last = exp
		}
	}
	return last
}

// start runs a new headless session in the worker's tree.
func (sv *Supervisor) start(sl *slot) error {
	args := append(slices.Clone(sv.o.Args), "-p", Prompt)
	if sv.o.MCP != "" {
		args = append([]string{"--mcp-config", mcpConfig(sv.o.MCP, sv.o.Root, sl.id)}, sv.o.Args...)
		args = append(args, "-p", SandboxedPrompt)
	}
	cmd := exec.Command(sv.o.Claude, args...)
	cmd.Dir = sl.tree
	cmd.Env = workerEnv(os.Environ(), sv.o.Root, sl.id)
	logPath := LogPath(sv.o.Root, sl.id)
	if fi, err := os.Stat(logPath); err == nil && fi.Size() > maxSessionLog {
		os.Rename(logPath, logPath+".1") // one older generation is kept
	}
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n=== %s session %d started %s ===\n", sl.id, sl.sessions+1, sv.o.Now().UTC().Format(time.RFC3339))
	cmd.Stdout, cmd.Stderr = out, out
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		out.Close()
		return err
	}
	sl.cmd, sl.started, sl.startedAt = cmd, sv.o.Now(), jobCounts(sv.o.Root)
	sl.sessions++
	sv.say("%s: session %d started (pid %d)", sl.id, sl.sessions, cmd.Process.Pid)
	go func() {
		err := cmd.Wait()
		out.Close()
		sv.exits <- exited{sl, err}
	}()
	return nil
}

// mcpConfig is the --mcp-config of worker id's session: the harness's MCP
// server, pinned to the job's state root and the worker's id.
func mcpConfig(harness, stateRoot, id string) string {
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"harness": map[string]any{
		"type": "stdio", "command": harness, "args": []string{"mcp"},
		"env": map[string]string{"HARNESS_STATE_ROOT": stateRoot, "HARNESS_WORKER_ID": id},
	}}})
	return string(data)
}

// workerEnv is the environment of a worker's session: the supervisor's,
// without what would make it look like a command of another session, with
// the state root pinned and the worker's id.
func workerEnv(env []string, stateRoot, id string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "CLAUDE_CODE_SESSION_ID", "CLAUDE_PID", "CLAUDECODE", "CLAUDE_PROJECT_DIR", "HARNESS_STATE_ROOT", "HARNESS_WORKER_ID":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HARNESS_STATE_ROOT="+stateRoot, "HARNESS_WORKER_ID="+id)
}

// maxSessionLog is how large a worker's session log grows before the next
// session starts a new one.
const maxSessionLog = 8 << 20

// LogPath is where worker id's sessions write their output.
func LogPath(stateRoot, id string) string {
	return filepath.Join(taskcycle.WorkersDir(stateRoot), id+".log")
}

// jobCounts is what the job's counts say now (tasks by status, attempts,
// checkpoints): a session that changed them moved the job.
func jobCounts(dir string) string {
	s, err := state.Load(dir)
	if err != nil {
		return ""
	}
	return schedule.Count(s.Tasks).Line()
}

// giveUpAfter is how many sessions in a row that end at once without
// moving the job each worker may have before the supervisor gives up: a
// broken setup (claude not logged in, a sandbox that cannot write the
// state) would otherwise start sessions for ever.
const giveUpAfter = 3

// stuck says why the supervisor gives up: every worker not stopped by the
// person had giveUpAfter sessions in a row that ended at once without
// moving the job; "" otherwise.
func (sv *Supervisor) stuck() string {
	n := 0
	for _, sl := range sv.slots {
		if sl.stopped {
			continue
		}
		if sl.cmd != nil || sl.quick < giveUpAfter {
			return ""
		}
		n++
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("every worker's last %d sessions ended at once without moving the job (last: %s); their output is in %s",
		giveUpAfter, sv.slots[0].exit, filepath.Join(taskcycle.WorkersDir(sv.o.Root), "w*.log"))
}

// quickSession is how short a session is that ended at once: its worker
// backs off before the next one, so a failing claude cannot spin.
const quickSession = 20 * time.Second

func (sv *Supervisor) ended(ex exited) {
	sl := ex.s
	took := sv.o.Now().Sub(sl.started)
	sl.cmd = nil
	sl.exit = "exit 0"
	var exit *exec.ExitError
	if errors.As(ex.err, &exit) {
		sl.exit = exit.String()
	} else if ex.err != nil {
		sl.exit = ex.err.Error()
	}
	moved := sl.startedAt != jobCounts(sv.o.Root)
	if took < quickSession && !moved && sv.offline == "" {
		sl.quick++
		sl.notAfter = sv.o.Now().Add(min(time.Duration(sl.quick)*5*time.Second, 2*time.Minute))
	} else {
		sl.quick = 0
	}
	sv.say("%s: session %d ended (%s) after %s", sl.id, sl.sessions, sl.exit, took.Round(time.Second))
	if killed(ex.err) && !sl.stopping {
		sv.sitOut(sl)
	}
	sl.stopping = false
}

// killed reports whether a session ended on a signal.
func killed(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && !exit.Exited()
}

// sitOut keeps a worker whose session was killed by a signal the
// supervisor did not send (the OOM killer, a person's kill -9) from
// starting again until the lease of the task it held expires: the task
// goes back to the pool as the protocol has it for a dead worker (any
// worker reaps the claim and takes the task), rather than to a new session
// in the same tree right away.
func (sv *Supervisor) sitOut(sl *slot) {
	s, err := state.Load(sv.o.Root)
	if err != nil {
		return
	}
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if t.Status != state.InProgress || t.Validated() || t.ClaimedBy != sl.id {
			continue
		}
		exp, err := time.Parse(time.RFC3339, t.LeaseExpiresAt)
		if err != nil {
			return
		}
		// A few polls past the lease: a peer's claim reaps the task first.
		if until := exp.Add(3 * sv.o.Poll); until.After(sl.notAfter) {
			sl.notAfter = until
		}
		sl.sittingOut = true
		sv.logf(s, "%s's session was killed (%s) holding %s: %s starts again once its lease expires at %s, and any worker may take the task then", sl.id, sl.exit, t.ID, sl.id, t.LeaseExpiresAt)
		sv.say("%s: killed holding %s; waits until its lease expires (%s)", sl.id, t.ID, t.LeaseExpiresAt)
		return
	}
}

func (sv *Supervisor) running() int {
	n := 0
	for _, sl := range sv.slots {
		if sl.cmd != nil {
			n++
		}
	}
	return n
}

// drain runs the merge queue in the background, once at a time. While
// the supervisor runs, it alone integrates (a worker's validate only
// queues): the queue's verdict is given in the person's process, and a
// long integration check never runs inside a worker's tool call.
func (sv *Supervisor) drain(ctx context.Context) {
	select {
	case sv.integ <- struct{}{}:
	default:
		return
	}
	go func() {
		defer func() { <-sv.integ }()
		w := taskcycle.New(sv.o.Root, sv.o.Root)
		w.ID = "supervisor"
		done, err := w.Integrate(ctx, 0)
		for _, in := range done {
			if in.Failure != nil {
				sv.say("merge queue: %s failed [%s] %s", in.Task.ID, in.Failure.Category, in.Failure.Message)
			} else {
				sv.say("merge queue: %s integrated as %s", in.Task.ID, git.Short(in.Merged))
			}
		}
		if err != nil {
			sv.say("merge queue: %v", err)
		}
	}()
}

// stopDir holds a person's requests to stop one worker.
func stopDir(stateRoot string) string {
	return filepath.Join(stateRoot, root.RuntimeDir, "workers-stop")
}

// RequestStop asks the running supervisor to stop worker id.
func RequestStop(stateRoot, id string) error {
	if err := os.MkdirAll(stopDir(stateRoot), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(stopDir(stateRoot), id), nil, 0o644)
}

// takeStopRequests stops the workers a person asked to stop: their
// session ended, their claim released, never started again.
func (sv *Supervisor) takeStopRequests() {
	for _, sl := range sv.slots {
		p := filepath.Join(stopDir(sv.o.Root), sl.id)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		os.Remove(p)
		if sl.stopped {
			continue
		}
		sl.stopped = true
		sv.stopSessions([]*slot{sl})
		sv.writeStatus("")
		sv.releaseClaims("stopped by the person", sl.id)
	}
}

// shutdown stops every session and releases their claims.
func (sv *Supervisor) shutdown(why string) {
	var ids []string
	for _, sl := range sv.slots {
		ids = append(ids, sl.id)
	}
	sv.stopSessions(sv.slots)
	for range 100 {
		if len(sv.integ) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond) // the drain ends with its context
	}
	sv.releaseClaims(why, ids...)
	sv.publish(why)
	sv.writeStatus(why)
	sv.say("harness workers: %s", why)
}

// stopTimeout is how long a session has to end after SIGTERM before it is
// killed.
const stopTimeout = 10 * time.Second

// stopSessions ends the running sessions of slots: SIGTERM to each
// session's process group, SIGKILL after stopTimeout.
func (sv *Supervisor) stopSessions(slots []*slot) {
	var live []*slot
	for _, sl := range slots {
		if sl.cmd != nil {
			sl.stopping = true
			terminate(sl.cmd)
			live = append(live, sl)
		}
	}
	deadline := time.After(stopTimeout)
	for len(live) > 0 {
		select {
		case ex := <-sv.exits:
			sv.ended(ex)
			live = slices.DeleteFunc(live, func(sl *slot) bool { return sl == ex.s })
		case <-deadline:
			for _, sl := range live {
				kill(sl.cmd)
			}
			deadline = time.After(stopTimeout)
		}
	}
}

// releaseClaims releases the unfinished claims of workers ids.
func (sv *Supervisor) releaseClaims(why string, ids ...string) {
	var released []string
	_, err := statecache.Update(sv.o.Root, func(s *state.State) error {
		released = release(s, func(t *state.Task) bool { return slices.Contains(ids, t.ClaimedBy) && sv.own(t) })
		log := []progress.Entry{{Time: sv.o.Now(), Session: s.SessionCount, Type: progress.Worker,
			Message: fmt.Sprintf("%s %s", strings.Join(ids, ", "), why)}}
		for _, r := range released {
			log = append(log, progress.Entry{Time: sv.o.Now(), Session: s.SessionCount, Type: progress.Lock, Message: r})
		}
		return progress.Append(sv.o.Root, log...)
	})
	if err != nil {
		// A shared job's remote out of reach: the claims stay until their
		// leases run out, then any machine reaps them.
		sv.say("%s: their claims could not be released (%v); they go back to the pool when their leases run out", strings.Join(ids, ", "), err)
		return
	}
	for _, r := range released {
		sv.say("%s", r)
	}
}

func (sv *Supervisor) logf(s *state.State, format string, args ...any) {
	progress.Append(sv.o.Root, progress.Entry{Time: sv.o.Now(), Session: s.SessionCount, Type: progress.Worker, Message: fmt.Sprintf(format, args...)})
}

// Status is what the supervisor writes for `harness status` and the
// report: its workers and how they stand.
type Status struct {
	PID       int            `json:"pid"`
	Branch    string         `json:"branch"`
	StartedAt string         `json:"started_at"`
	UpdatedAt string         `json:"updated_at"`
	Ended     string         `json:"ended,omitempty"` // why it ended, once it has
	Workers   []WorkerStatus `json:"workers"`
}

// WorkerStatus is one worker in Status.
type WorkerStatus struct {
	ID       string `json:"id"`
	Tree     string `json:"tree"`
	State    string `json:"state"` // running, idle, stopped
	PID      int    `json:"pid,omitempty"`
	Sessions int    `json:"sessions"`
	LastExit string `json:"last_exit,omitempty"`
	Log      string `json:"log"`
}

// StatusPath is where the supervisor's Status is written.
func StatusPath(stateRoot string) string {
	return filepath.Join(stateRoot, root.RuntimeDir, "workers.json")
}

func (sv *Supervisor) writeStatus(ended string) {
	st := Status{PID: os.Getpid(), Branch: sv.branch, StartedAt: sv.started.UTC().Format(time.RFC3339),
		UpdatedAt: sv.o.Now().UTC().Format(time.RFC3339), Ended: ended}
	for _, sl := range sv.slots {
		ws := WorkerStatus{ID: sl.id, Tree: sl.tree, State: "idle", Sessions: sl.sessions, LastExit: sl.exit, Log: LogPath(sv.o.Root, sl.id)}
		switch {
		case sl.cmd != nil:
			ws.State, ws.PID = "running", sl.cmd.Process.Pid
		case sl.stopped:
			ws.State = "stopped"
		}
		st.Workers = append(st.Workers, ws)
	}
	atomicfile.ReplaceJSON(StatusPath(sv.o.Root), st)
}

// ReadStatus reads the supervisor's last Status; ok is false when no
// supervisor ever ran for the job. Live reports whether it still runs. The
// file is in the runtime directory, within the agent's reach: it is read
// bounded and only when regular (safefile), so a FIFO there cannot hang
// `harness status`.
func ReadStatus(stateRoot string) (st Status, live, ok bool) {
	b, err := safefile.ReadFile(StatusPath(stateRoot), safefile.Small)
	if err != nil || json.Unmarshal(b, &st) != nil {
		return Status{}, false, false
	}
	return st, st.Ended == "" && lock.Alive(st.PID), true
}
