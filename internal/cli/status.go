package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/remote"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/taskcycle"
	"github.com/harness-agent/harness/internal/trail"
	"github.com/harness-agent/harness/internal/workers"
)

var statusVerb = &command{
	name:    "status",
	args:    "[--all] [--json] [--watch [--interval DURATION]] [--remote]",
	summary: "show counts, one line per task (a long job: those in progress, failed or blocked and the next to claim), recent log lines and sessions (read-only, no lock)",
	run:     runStatus,
}

// statusTask is one task in `status --json`.
type statusTask struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Status      string `json:"status"`
	Priority    string `json:"priority"`
	Attempts    int    `json:"attempts"`
	MaxAttempts int    `json:"max_attempts"`
	Blocked     bool   `json:"blocked"`
	ClaimedBy   string `json:"claimed_by,omitempty"`
	// Every other field of the task as the file has it.
	DependsOn       []string           `json:"depends_on"`
	Validation      statusValidation   `json:"validation"`
	Cleanup         string             `json:"cleanup,omitempty"`
	AllowedPaths    []string           `json:"allowed_paths,omitempty"`
	StartedAtCommit string             `json:"started_at_commit,omitempty"`
	ClaimedAt       string             `json:"claimed_at,omitempty"`
	LeaseExpiresAt  string             `json:"lease_expires_at,omitempty"`
	CompletedAt     string             `json:"completed_at,omitempty"`
	FailedAt        string             `json:"failed_at,omitempty"`
	ErrorLog        []string           `json:"error_log"`
	Checkpoints     []state.Checkpoint `json:"checkpoints"`
	Source          string             `json:"source,omitempty"`
	Description     string             `json:"description,omitempty"`
	Acceptance      []string           `json:"acceptance,omitempty"`
	// With workers: the stage of a task past its validation, "validated"
	// (waiting in the merge queue) or "integrated", and its commits.
	Stage            string `json:"stage,omitempty"`
	ClaimGeneration  int    `json:"claim_generation,omitempty"`
	ValidatedCommit  string `json:"validated_commit,omitempty"`
	ValidatedAt      string `json:"validated_at,omitempty"`
	IntegratedCommit string `json:"integrated_commit,omitempty"`
}

// stage is where a task stands past its validation with workers:
// "validated" (in the merge queue), "integrated", or "".
func stage(t *state.Task) string {
	switch {
	case t.Validated():
		return "validated"
	case t.Status == state.Completed && t.IntegratedCommit != "":
		return "integrated"
	}
	return ""
}

// statusValidation is a task's validation in `status --json`.
type statusValidation struct {
	Command        string `json:"command"`
	TimeoutSeconds int    `json:"timeout_seconds"`
}

// statusJSON is the stable machine-readable shape of `status --json`.
type statusJSON struct {
	Root         string         `json:"root"`
	Active       bool           `json:"active"`
	Counts       map[string]int `json:"counts"`
	Next         *statusTask    `json:"next"`
	Why          string         `json:"why,omitempty"`
	Tasks        []statusTask   `json:"tasks"`
	SessionCount int            `json:"session_count"`
	LastSession  string         `json:"last_session"`
	Recent       []string       `json:"recent_log"`
	FromBackup   bool           `json:"from_backup,omitempty"`
	Broken       string         `json:"broken,omitempty"` // why the tasks file does not read (from_backup)
	// Budget lists the job's budget limits with what was used, when
	// session_config sets any (see `harness budget`).
	Budget []budgetLineJSON `json:"budget,omitempty"`
	Paused bool             `json:"paused,omitempty"`
	// Cancelled: a person cancelled the run (`harness cancel`); Held says
	// since when, for a pause too.
	Cancelled bool   `json:"cancelled,omitempty"`
	HeldSince string `json:"held_since,omitempty"`
	// Trust holds what status says of the harness's own files (trustNotes).
	Trust []string `json:"trust"`
	// Skipped are eligible tasks claim passes over (no validation
	// command), with the command that fixes each.
	Skipped []skippedJSON `json:"skipped,omitempty"`
	// Unchecked counts the tasks still to do without a validation
	// command, with the one command that gives them all one.
	Unchecked *uncheckedJSON `json:"no_validation,omitempty"`
	// Cycles are the dependency cycles in the plan, as task ids, the first
	// repeated at the end: no task on one ever starts.
	Cycles [][]string `json:"cycles,omitempty"`
	// Unattended is the last PERSON line of an action taken without a
	// terminal while a session held the lock (see suspectPerson).
	Unattended string `json:"unattended_person_action,omitempty"`
	// Wiring lists what undid the harness's wiring into Claude Code (hooks
	// no longer registered, "disableAllHooks", a replaced executable).
	Wiring []string `json:"wiring,omitempty"`
	// TrustLevel is the level of trust in force: "sandboxed" or
	// "standard" (trustlevel.go), and why below sandboxed.
	TrustLevel    string `json:"trust_level"`
	TrustLevelWhy string `json:"trust_level_why,omitempty"`
	// Workers is the board of `harness workers`, once one ran.
	Workers *workers.Board `json:"workers,omitempty"`
	// status --remote: every machine of a job shared through a remote,
	// and this one's name and clone id.
	Machines []trail.Machine `json:"machines,omitempty"`
	Machine  string          `json:"machine,omitempty"`
	Clone    string          `json:"clone,omitempty"`
}

// machineLabel names a machine of a shared job with its clone's id.
func machineLabel(name, clone string) string {
	if clone == "" {
		return name
	}
	return name + " (clone " + clone + ")"
}

// skippedJSON is an eligible task `status --json` says claim passes over.
type skippedJSON struct {
	ID  string `json:"id"`
	Why string `json:"why"`
	Fix string `json:"fix"`
}

// uncheckedJSON is how many tasks `status --json` says have no check.
type uncheckedJSON struct {
	Count int    `json:"count"`
	Fix   string `json:"fix"`
}

// noCheck is why claim passes over a task without a validation command
// (schedule.Choose).
const noCheck = "no validation command, so it can never be completed"

// checkFix is the command that gives task id a validation command.
func checkFix(id string) string { return "harness edit " + failure.ShellArg(id) + " --validate CMD" }

// maxListed is how many tasks a report names one by one before it counts
// the rest.
const maxListed = 10

// printSkipped names the eligible tasks claim passes over (the first
// maxListed of them), then says how many tasks have no validation command
// and the one command that gives them all one.
func printSkipped(w io.Writer, skipped []*state.Task, tasks []state.Task) {
	for i, t := range skipped {
		if i == maxListed {
			fmt.Fprintf(w, "skipped: … and %d more eligible task(s) without a validation command\n", len(skipped)-i)
			break
		}
		fmt.Fprintf(w, "skipped: %s has %s: %s\n", t.ID, noCheck, checkFix(t.ID))
	}
	if n := schedule.CountUnchecked(tasks); n > 0 {
		fmt.Fprintf(w, "no check: %d task(s) have no validation command, so no session can claim or complete them; %s gives them all one (`--dry-run` lists them)\n",
			n, taskcycle.CheckAllCommand)
	}
}

func runStatus(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	asJSON := fs.Bool("json", false, "print JSON for machines")
	watch := fs.Bool("watch", false, "redraw the status until interrupted")
	interval := fs.Duration("interval", 2*time.Second, "how often --watch redraws")
	all := fs.Bool("all", false, "list every task, however many (by default a job of more than 40 lists those in progress, failed or blocked and the next to claim)")
	fromRemote := fs.Bool("remote", false, "on a job shared through a git remote: bring the state from the remote first, and show every machine's workers")
	if err := e.parseNone(c, fs, args); err != nil {
		return e.fail(err)
	}
	e.fromRemote = *fromRemote
	if *watch && (*asJSON || *interval <= 0) {
		return e.fail(usageErr(c, "--watch takes a positive --interval and no --json"))
	}
	dir, err := e.viewRoot()
	if err != nil {
		return e.fail(err)
	}
	if *watch {
		return e.watchStatus(dir, *interval, *all)
	}
	return e.showStatus(dir, *asJSON, *all)
}

// watchStatus redraws the status every interval, in place (plain ANSI:
// cursor home, clear screen), until interrupted.
func (e *Env) watchStatus(dir string, interval time.Duration, all bool) int {
	ctx, stop := interruptible()
	defer stop()
	for {
		var frame bytes.Buffer
		out := e.Stdout
		e.Stdout = &frame
		e.showStatus(dir, false, all)
		e.Stdout = out
		fmt.Fprintf(out, "\x1b[H\x1b[2J%s\n(refreshed %s, every %s; Ctrl-C stops)\n", frame.String(), e.Now().Format("15:04:05"), interval)
		select {
		case <-ctx.Done():
			return ExitOK
		case <-time.After(interval):
		}
	}
}

// showStatus prints the status of the state root dir once; all lists
// every task however many there are.
func (e *Env) showStatus(dir string, asJSON, all bool) int {
	var machines []trail.Machine
	if e.fromRemote {
		if _, ok := remote.Load(dir); !ok {
			return e.fail(failure.New(failure.Usage, "this job is not shared through a git remote").
				WithHint("`harness status` without --remote shows it"))
		}
		if _, err := state.Sync(dir, remote.MachineRefs); err != nil {
			return e.fail(err)
		}
	}
	s, err := state.Load(dir)
	if err != nil {
		return e.fail(err)
	}
	if e.fromRemote {
		machines = trail.Machines(dir, s)
	}
	st := schedule.Count(s.Tasks)
	shownPending, shownFailed, shownBlocked := st.Shown()
	// With workers, the board looks further back for each worker's last
	// line; the recent lines are the end of the same read.
	lines := 5
	if s.Concurrent() {
		lines = 400
	}
	tail, _ := progress.Tail(dir, lines)
	recent := tail[max(len(tail)-5, 0):]
	var board *workers.Board
	if s.Concurrent() {
		board = workers.View(dir, s, tail)
	}
	byID := schedule.Index(s.Tasks)
	blocked := func(t *state.Task) bool { return schedule.PendingBlocked(s.Tasks, byID, t) }
	choice, why := e.worker(dir).Next(s)
	next := choice.Next
	cycles := schedule.Cycles(s.Tasks)
	taskJSON := func(t *state.Task) statusTask {
		return statusTask{ID: t.ID, Title: t.Title, Status: t.Status, Priority: t.Priority,
			Attempts: t.Attempts, MaxAttempts: t.MaxAttempts, Blocked: blocked(t), ClaimedBy: t.ClaimedBy,
			DependsOn: orEmpty(t.DependsOn), Validation: statusValidation{t.Command, int(t.Timeout().Seconds())},
			Cleanup: t.Cleanup, AllowedPaths: t.AllowedPaths, StartedAtCommit: t.StartedAtCommit, ClaimedAt: t.ClaimedAt,
			LeaseExpiresAt: t.LeaseExpiresAt, CompletedAt: t.CompletedAt, FailedAt: t.FailedAt,
			ErrorLog: orEmpty(t.ErrorLog), Checkpoints: append([]state.Checkpoint{}, t.Checkpoints...),
			Source: t.Source, Description: t.Description, Acceptance: orEmpty(t.Acceptance),
			Stage: stage(t), ClaimGeneration: t.Generation, ValidatedCommit: t.ValidatedCommit, ValidatedAt: t.ValidatedAt,
			IntegratedCommit: t.IntegratedCommit}
	}
	if asJSON {
		out := statusJSON{Root: dir, Active: isActive(dir), SessionCount: s.SessionCount, LastSession: s.LastSession,
			Recent: orEmpty(recent), FromBackup: s.FromBackup, Broken: s.Broken, Tasks: []statusTask{},
			Counts: map[string]int{"total": st.Total, "pending": shownPending, "in_progress": st.InProgress,
				"completed": st.Completed, "failed": shownFailed, "blocked": shownBlocked},
			Trust: orEmpty(trustNotes(dir)), Unattended: suspectPerson(dir), Wiring: e.wiringProblems(dir),
			Workers: board, Machines: machines}
		if rc, ok := remote.Load(dir); ok && e.fromRemote {
			out.Machine, out.Clone = rc.Machine, rc.Clone
		}
		lv := trustLevelOf(dir)
		out.TrustLevel, out.TrustLevelWhy = lv.Level, lv.Why
		if h, ok := heldOf(dir); ok {
			out.Paused, out.Cancelled, out.HeldSince = !h.cancelled, h.cancelled, h.since
		}
		for _, l := range budgetUse(dir, s) {
			out.Budget = append(out.Budget, budgetLineJSON{l.Name, l.Limit, l.Used, l.Percent(), l.Over()})
		}
		for i := range s.Tasks {
			out.Tasks = append(out.Tasks, taskJSON(&s.Tasks[i]))
		}
		for _, t := range choice.Skipped {
			out.Skipped = append(out.Skipped, skippedJSON{ID: t.ID, Why: noCheck, Fix: checkFix(t.ID)})
		}
		if n := schedule.CountUnchecked(s.Tasks); n > 0 {
			out.Unchecked = &uncheckedJSON{Count: n, Fix: strings.Trim(taskcycle.CheckAllCommand, "`")}
		}
		for _, c := range cycles {
			out.Cycles = append(out.Cycles, c)
		}
		if next != nil {
			nt := taskJSON(next)
			out.Next = &nt
		} else {
			out.Why = string(why)
		}
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		enc.Encode(out)
		return ExitOK
	}
	w := e.Stdout
	e.printWiring(e.wiringProblems(dir))
	if s.FromBackup {
		fmt.Fprintln(w, corruptWarning(s))
	}
	active := "active"
	if h, ok := heldOf(dir); ok {
		active = h.headline()
	} else if !isActive(dir) {
		active = "inactive (no .harness-active)"
	}
	fmt.Fprintf(w, "harness %s — %s\n", dir, active)
	for _, note := range trustNotes(dir) {
		fmt.Fprintln(w, note)
	}
	fmt.Fprintf(w, "tasks: %s\n", st.Counts())
	if next != nil {
		fmt.Fprintf(w, "next:  %s: %s\n", next.ID, next.Title)
		for _, a := range next.Acceptance {
			fmt.Fprintf(w, "       accept: %s\n", a)
		}
	} else {
		fmt.Fprintf(w, "next:  none (%s)\n", why)
	}
	printSkipped(w, choice.Skipped, s.Tasks)
	for _, c := range cycles {
		fmt.Fprintf(w, "cycle: %s (no task on it can ever start: leave out one link with `harness edit %s --depends-on …`)\n", c, failure.ShellArg(c[0]))
	}
	for _, c := range schedule.DormantCycles(s.Tasks) {
		fmt.Fprintf(w, "cycle: %s, through completed tasks (it holds nothing up while they stay completed; one reopened could never start again: leave out one link with `harness edit %s --depends-on …`)\n", c, failure.ShellArg(c[0]))
	}
	if len(s.Tasks) > 0 {
		fmt.Fprintln(w)
	}
	label := func(t *state.Task) string {
		l := t.Status
		if blocked(t) || t.Status == state.Failed && t.HasDependencyError() {
			l = "blocked"
		}
		if st := stage(t); st != "" {
			l = st
		}
		return l
	}
	shown, left := listed(s.Tasks, all, label)
	for _, t := range shown {
		fmt.Fprintf(w, "[%s] %s: %s — %s\n", label(t), t.ID, t.Title, strings.Join(taskDetails(s, byID, t), "; "))
	}
	if left != "" {
		fmt.Fprintf(w, "(%s not listed: `harness status --all` lists every task, `harness report` draws them)\n", left)
	}
	if board != nil {
		fmt.Fprintln(w)
		for _, l := range board.Lines() {
			fmt.Fprintln(w, l)
		}
	}
	if e.fromRemote {
		rc, _ := remote.Load(dir)
		fmt.Fprintf(w, "\nmachines sharing the job through %s (this one: %s):\n", rc.Remote, machineLabel(rc.Machine, rc.Clone))
		for _, m := range machines {
			last := m.LastChange
			if last == "" {
				last = "never"
			}
			fmt.Fprintf(w, "  %s: last change %s, %d claims\n", machineLabel(m.Name, m.Clone), last, len(m.Claims))
			if m.Ended != "" {
				fmt.Fprintf(w, "    supervisor ended: %s\n", m.Ended)
			}
			for _, wk := range m.Workers {
				fmt.Fprintf(w, "    worker %s\n", wk)
			}
			for _, c := range m.Claims {
				fmt.Fprintf(w, "    claim %s\n", c)
			}
			if m.LastLine != "" {
				fmt.Fprintf(w, "    last: %s\n", m.LastLine)
			}
		}
	}
	last := s.LastSession
	if last == "" {
		last = "never"
	}
	fmt.Fprintf(w, "\nsessions: %d (last ended %s)\n", s.SessionCount, last)
	fmt.Fprintln(w, trustLevelOf(dir))
	if cmd := s.ProjectCheck(); cmd != "" {
		fmt.Fprintf(w, "project's check: %s (session_config.integration_check: every completion passes it too, after the task's own validation)\n", cmd)
	}
	if use := budgetUse(dir, s); len(use) > 0 {
		fmt.Fprintf(w, "budget: %s\n", budget.Join(use))
	}
	if l := suspectPerson(dir); l != "" {
		fmt.Fprintf(w, "a person's decision was taken without a terminal while a session held the lock (yours? a script of yours?):\n  %s\n", l)
	}
	if len(recent) > 0 {
		fmt.Fprintln(w, "recent log:")
		for _, l := range recent {
			fmt.Fprintln(w, "  "+l)
		}
	}
	return ExitOK
}

// listAll is how many tasks status lists one by one whatever they are;
// past it, a job of thousands would bury the rest of the page (and fill
// an agent's context), so status lists those a person looks at.
const listAll = 40

// listSome bounds each kind of task a long job's status lists.
const listSome = 20

// listed is the tasks status lists, in the file's order, and what it
// leaves out ("" for nothing): every task of a job of listAll or fewer
// (or with all); else those in progress, past their validation, failed
// or blocked (listSome of each kind at most) and the next listSome to
// claim, with a count of the rest by kind ("580 completed, 390 pending").
func listed(tasks []state.Task, all bool, label func(*state.Task) string) (shown []*state.Task, left string) {
	if all || len(tasks) <= listAll {
		for i := range tasks {
			shown = append(shown, &tasks[i])
		}
		return shown, ""
	}
	next := map[*state.Task]bool{}
	for _, t := range schedule.Candidates(tasks) {
		if len(next) == listSome {
			break
		}
		next[t] = true
	}
	perKind := map[string]int{}
	hidden := map[string]int{}
	var order []string // the kinds left out, as first met
	for i := range tasks {
		t := &tasks[i]
		kind := label(t)
		take := next[t]
		switch kind {
		case state.Completed, "integrated", state.Pending:
		default:
			take = take || perKind[kind] < listSome
		}
		if take {
			perKind[kind]++
			shown = append(shown, t)
			continue
		}
		if hidden[kind] == 0 {
			order = append(order, kind)
		}
		hidden[kind]++
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d %s", hidden[k], k))
	}
	return shown, strings.Join(parts, ", ")
}

// corruptWarning is what every view says of a tasks file that does not
// read: the state shown instead, and what the next verb that saves does.
func corruptWarning(s *state.State) string {
	return fmt.Sprintf("WARN harness-tasks.json does not read (%s); showing %s, the last state the harness wrote: the next harness command that saves puts it back and keeps the broken copy aside (a hand edit you mean to keep: fix it, then `harness adopt`)", s.Broken, s.Source)
}

// plural is "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// attempts is "1 attempt" or "n attempts".
func attempts(n int) string { return plural(n, "attempt") }

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// taskDetails says what a person needs to know of a task on its status
// line: its priority, where it stands in its attempts, what it waits on,
// who holds it, and its last error.
func taskDetails(s *state.State, byID map[string]int, t *state.Task) []string {
	priority := t.Priority
	if priority == "" {
		priority = "no priority"
	}
	out := []string{priority}
	switch t.Status {
	case state.Pending:
		if t.Attempts == 0 {
			out = append(out, "not started (up to "+attempts(t.MaxAttempts)+")")
		} else {
			out = append(out, fmt.Sprintf("%d of %s used", t.Attempts, attempts(t.MaxAttempts)))
		}
	case state.InProgress:
		out = append(out, fmt.Sprintf("attempt %d of %d", t.Attempts+1, t.MaxAttempts))
		if t.Validated() {
			out = append(out, fmt.Sprintf("passed in its worker's tree as %s at %s, waits in the merge queue (not integrated yet)", git.Short(t.ValidatedCommit), t.ValidatedAt))
		}
	case state.Completed:
		out = append(out, "done (after "+plural(t.Attempts, "failed attempt")+")")
		switch {
		case t.StartedAtCommit == "" && t.Source != "":
			out[len(out)-1] = "done in the plan it was imported from, never verified by the harness"
		case t.Attempts == 0:
			out[len(out)-1] = "done at the first attempt"
		}
	case state.Failed:
		if t.PermanentlyFailed() {
			out = append(out, fmt.Sprintf("failed for good (%d of %s)", t.Attempts, attempts(t.MaxAttempts)))
		} else {
			out = append(out, fmt.Sprintf("%d of %s failed, retryable", t.Attempts, attempts(t.MaxAttempts)))
		}
	}
	if t.Status != state.Completed {
		var waits []string
		for _, d := range t.DependsOn {
			j, ok := byID[d]
			switch {
			case !ok:
				waits = append(waits, d+" (unknown)")
			case s.Tasks[j].Status != state.Completed:
				waits = append(waits, fmt.Sprintf("%s (%s)", d, s.Tasks[j].Status))
			}
		}
		if len(waits) > 0 {
			out = append(out, "waits on "+strings.Join(waits, ", "))
		}
	}
	if t.Status == state.Completed && t.IntegratedCommit != "" {
		out = append(out, "integrated as "+git.Short(t.IntegratedCommit)+" after its validation passed on the merged tree")
	}
	if t.Status == state.InProgress && t.ClaimedBy != "" && !t.Validated() {
		holder := "claimed by " + t.ClaimedBy
		if t.LeaseExpiresAt != "" {
			holder += ", lease until " + t.LeaseExpiresAt
		}
		out = append(out, holder)
	}
	if strings.TrimSpace(t.Command) == "" && t.Status != state.Completed {
		out = append(out, "no validation command (harness edit "+t.ID+" --validate …)")
	}
	if n := len(t.ErrorLog); n > 0 && t.Status != state.Completed {
		last := strings.SplitN(t.ErrorLog[n-1], "\n", 2)[0]
		if len(last) > 120 {
			last = last[:117] + "..."
		}
		out = append(out, "last error: "+last)
	}
	return out
}

// budgetUse measures the job's budget limits (the per-session ones speak of
// a session, not of the job) against what its sessions spent.
func budgetUse(dir string, s *state.State) []budget.Line {
	if !s.Config.Budget.Any() {
		return nil
	}
	return budget.Measure(s.Config.Budget, budget.Total(record.Of(dir), nil), nil)
}

// load reads the state for a view, and says on stderr, as status does, when
// the tasks file does not read and the last state the harness wrote is
// shown instead.
func (e *Env) load(dir string) (*state.State, error) {
	s, err := state.Load(dir)
	if err == nil && s.FromBackup {
		fmt.Fprintln(e.Stderr, corruptWarning(s))
	}
	return s, err
}
