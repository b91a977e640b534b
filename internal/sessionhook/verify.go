package sessionhook

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/fence"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/validation"
)

// gateBudget bounds the verification gate as a whole
// (HARNESS_VERIFY_BUDGET seconds): it must end inside the Stop hook's own
// timeout (300 s as the installer registers it), or Claude Code kills the
// hook and lets the stop through unchecked.
func gateBudget() time.Duration {
	return validation.EnvSeconds("HARNESS_VERIFY_BUDGET", 240*time.Second)
}

// recheck is one validation command to re-run and the tasks that share it.
type recheck struct {
	command string
	timeout time.Duration
	tasks   []string
	result  validation.Result
	cut     bool // stopped by the gate's budget before its own timeout: unverified
	project bool // the project's check (integration_check), not a task's own
}

// verificationGate re-runs, in parallel, the validation commands of the tasks
// completed in this session (ids) that are still completed. A task whose
// command no longer passes is reopened (failed, [TEST_FAIL], attempts+1) and
// the stop is blocked. It reports whether it blocked.
func verificationGate(c *call, s *state.State, rt *Runtime, n int, ids []string) (hook.Decision, bool) {
	tree := c.tree(s)
	// A task the merge queue integrated is judged in this worker's tree
	// only once the tree holds its commit: a worker's tree goes back to the
	// integration tip at each claim, which may not have it yet (the queue
	// validated it on the merged tree; this gate checks again later, when
	// the tree has caught up, and until then it stays unverified).
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool {
		t := s.Task(id)
		return t != nil && t.Status == state.Completed && t.IntegratedCommit != "" && !git.IsAncestor(tree.Top, t.IntegratedCommit, "HEAD")
	})
	checks := withProjectCheck(s, checksFor(s, ids))
	if len(checks) == 0 {
		c.Record().Verified(ids...)
		return hook.Decision{}, false
	}
	f := fence.Open(c.Project)
	runChecks(f, tree.Dir, checks, gateBudget())
	// What ran to an outcome is verified (passed, or reopened below), as
	// is what needs no check (no longer completed); what the budget cut
	// stays unverified for the next turn end. Not for the project's check:
	// a whole test suite longer than the budget would be cut at every turn
	// end, the stop held for the budget each time; every completion passed
	// it already, so it is said once and left.
	var cut []string
	for _, ch := range checks {
		if ch.cut && !ch.project {
			cut = append(cut, ch.tasks...)
		}
	}
	settled := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return slices.Contains(cut, id) })
	defer c.Record().Verified(settled...)
	// The commands are fenced like a validation: what they did to the
	// harness files is put back, and the tasks they check fail with
	// [TAMPER] (run side by side, no one command can be named).
	var commands []string
	for _, ch := range checks {
		commands = append(commands, "`"+clip(ch.command, 60)+"`")
	}
	fenced := f.Close("the verification gate (" + strings.Join(commands, ", ") + ")")
	category, note := failure.TestFail, regressionNote
	if fenced.Tampered() {
		category, note = failure.Tamper, "the validation commands the verification gate ran changed harness files, which were put back: "+fenced.Files()
	}
	failed := map[string]*recheck{}
	for _, ch := range checks {
		if fenced.Tampered() {
			for _, id := range ch.tasks {
				failed[id] = ch
			}
			continue
		}
		if ch.result.Unconfined != "" && ch.project {
			logWarn(c.Root, n, c.now, "verification gate: the project's check `%s` not run: %s (%s)", clip(ch.command, 120), ch.result.Unconfined, fence.Hint())
			continue
		}
		if ch.result.Unconfined != "" {
			logWarn(c.Root, n, c.now, "verification gate: `%s` (%s) not run: %s; left unverified (%s)",
				clip(ch.command, 120), strings.Join(ch.tasks, ", "), ch.result.Unconfined, fence.Hint())
			continue
		}
		if ch.cut && ch.project {
			logWarn(c.Root, n, c.now, "verification gate: the project's check `%s` did not finish within HARNESS_VERIFY_BUDGET=%s; not run again at this session's end (each completion passed it)",
				clip(ch.command, 120), gateBudget())
			continue
		}
		if ch.cut {
			logWarn(c.Root, n, c.now, "verification gate: `%s` (%s) did not finish within HARNESS_VERIFY_BUDGET=%s; left unverified",
				clip(ch.command, 120), strings.Join(ch.tasks, ", "), gateBudget())
			continue
		}
		if ch.result.Outcome != validation.Pass {
			for _, id := range ch.tasks {
				failed[id] = ch
			}
		}
	}
	if len(failed) == 0 {
		return hook.Decision{}, false
	}
	var reopened []string
	var entries []progress.Entry
	project := false // the project's check is among what failed
	s, err := statecache.Update(c.Root, func(s *state.State) error {
		reopened, entries, project = nil, nil, false
		for i := range s.Tasks {
			t := &s.Tasks[i]
			ch := failed[t.ID]
			if ch == nil || t.Status != state.Completed {
				continue
			}
			why, what := note, ""
			if ch.project {
				project = true
				what = "the project's check (integration_check, blamed on the task this session completed last) "
				if category == failure.TestFail {
					why = note + ": integration_check " + ch.result.Outcome.String()
					if l := strings.TrimSpace(ch.result.FirstLine); l != "" {
						why += ": " + clip(l, 200)
					}
				}
			}
			t.Status = state.Failed
			t.Attempts++
			t.ErrorLog = append(t.ErrorLog, "["+category+"] "+why)
			t.FailedAt = c.now.UTC().Format(time.RFC3339)
			t.CompletedAt = ""
			entries = append(entries, progress.Entry{Time: c.now, Session: n, Type: progress.Error, TaskID: t.ID, Category: category,
				Message: fmt.Sprintf("%s: %s`%s` %s", note, what, clip(ch.command, 120), verdict(ch.result))})
			reopened = append(reopened, fmt.Sprintf("- %s: %s`%s` %s\n  reopened: failed [%s] %s (attempts %d/%d)",
				describe(t.ID, t.Title), what, clip(ch.command, 120), verdict(ch.result), category, note, t.Attempts, t.MaxAttempts))
		}
		return nil
	})
	if err != nil || len(reopened) == 0 {
		return hook.Decision{}, false
	}
	progress.Append(c.Root, entries...)
	sum := statecache.Of(s)
	var b strings.Builder
	if fenced.Tampered() {
		fmt.Fprintf(&b, "HARNESS: verification gate: [%s] the validation commands it ran changed harness files, which were put back (%s); %d task(s) they check are reopened.\n", failure.Tamper, fenced.Files(), len(reopened))
	} else {
		pass := "their validation"
		if project {
			pass += " or the project's check"
		}
		fmt.Fprintf(&b, "HARNESS: verification gate: %d task(s) completed in this session no longer pass %s.\n", len(reopened), pass)
	}
	if len(reopened) > maxListed {
		reopened = append(reopened[:maxListed], fmt.Sprintf("- … and %d more (harness status)", len(reopened)-maxListed))
	}
	b.WriteString(strings.Join(reopened, "\n"))
	fmt.Fprintf(&b, "\n%s\n", sum.Stats.Counts())
	if todo := nextStep(remaining(sum, c.now, c.ids()...), details(s)); todo != "" {
		fmt.Fprintf(&b, "do now: %s (fix the regression forward: later work stays).", todo)
	} else {
		b.WriteString("No attempts are left for the reopened task(s): say what regressed and why in your final message.")
	}
	return blockOrValve(c, rt, n, sum, b.String()), true
}

// checksFor groups the validation commands of the still-completed tasks ids
// (one run per distinct command, with the longest timeout among its tasks).
func checksFor(s *state.State, ids []string) []*recheck {
	var checks []*recheck
	byCommand := map[string]*recheck{}
	for _, id := range ids {
		t := s.Task(id)
		if t == nil || t.Status != state.Completed || strings.TrimSpace(t.Command) == "" {
			continue
		}
		ch := byCommand[t.Command]
		if ch == nil {
			ch = &recheck{command: t.Command}
			byCommand[t.Command] = ch
			checks = append(checks, ch)
		}
		ch.tasks = append(ch.tasks, t.ID)
		ch.timeout = max(ch.timeout, t.Timeout())
	}
	return checks
}

// withProjectCheck adds the project's check (state.ProjectCheck), which
// every completion passed after its own validation, to the gate's checks
// of this session's completions, blamed on the one completed last: what
// breaks the project came with that completion or after it. A command a
// task validates with too is run once.
func withProjectCheck(s *state.State, checks []*recheck) []*recheck {
	cmd := s.ProjectCheck()
	if cmd == "" || len(checks) == 0 {
		return checks
	}
	last, at := "", ""
	for _, ch := range checks {
		for _, id := range ch.tasks {
			if t := s.Task(id); t != nil && t.CompletedAt >= at {
				last, at = id, t.CompletedAt
			}
		}
	}
	for _, ch := range checks {
		if strings.TrimSpace(ch.command) == cmd {
			if !slices.Contains(ch.tasks, last) {
				ch.tasks = append(ch.tasks, last)
			}
			ch.timeout = max(ch.timeout, s.Config.IntegrationTimeout())
			return checks
		}
	}
	return append(checks, &recheck{command: cmd, timeout: s.Config.IntegrationTimeout(), tasks: []string{last}, project: true})
}

// runChecks runs the checks in dir side by side, each within its own
// timeout and all within budget.
func runChecks(f *fence.Fence, dir string, checks []*recheck, budget time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	jobs := make([]validation.Job, len(checks))
	for i, ch := range checks {
		jobs[i] = validation.Job{Command: ch.command, Timeout: ch.timeout}
	}
	for i, r := range f.RunAll(ctx, dir, jobs) {
		checks[i].result = r.Result
		// A check that could not run confined proves nothing either way:
		// it stays unverified, like one the budget cut.
		checks[i].cut = r.Late && r.Outcome != validation.Pass || r.Unconfined != ""
	}
}
