package cli

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

var retryVerb = &command{
	name:    "retry",
	args:    "ID…",
	summary: "reopen tasks that failed for good: pending again with their attempts reset, their error_log kept (a person's decision: refused inside a Claude Code session)",
	run:     runRetry,
}

// runRetry reopens the tasks given, together: a task failed [DEPENDENCY]
// may wait on another of them. None is reopened when one would be failed
// again at the next claim (still on a cycle, still blocked).
func runRetry(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	ids, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(ids) == 0 {
		return e.fail(usageErr(c, "expected at least one task ID"))
	}
	if err := e.personOnly(c.name); err != nil {
		return e.fail(err)
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	var reopened, reopenable []string
	_, err = statecache.Update(dir, func(s *state.State) error {
		for _, id := range ids {
			if err := failedForGood(s, id); err != nil {
				return err
			}
		}
		if marks := schedule.Reopen(s.Tasks, ids); len(marks) > 0 {
			return stillBlocked(s, marks[0])
		}
		var log []progress.Entry
		for _, id := range ids {
			t := s.Task(id)
			if t.Status == state.Pending {
				continue // named twice
			}
			was := fmt.Sprintf("was failed %d/%d", t.Attempts, t.MaxAttempts)
			if n := len(t.ErrorLog); n > 0 {
				was += " " + shortLine(t.ErrorLog[n-1], 100)
			}
			t.Status, t.Attempts, t.FailedAt = state.Pending, 0, ""
			t.ClearClaim()
			reopened = append(reopened, id)
			log = append(log, progress.Entry{Time: e.Now(), Session: s.SessionCount, Type: progress.Retry, TaskID: id,
				Message: fmt.Sprintf("reopened by a person: attempts reset (%s)", was)})
		}
		// Tasks failed [DEPENDENCY] because of these may be free now too.
		reopenable = schedule.Reopenable(s.Tasks)
		return progress.Append(dir, log...)
	})
	if err != nil {
		return e.fail(err)
	}
	fmt.Fprintf(e.Stdout, "reopened %s: pending, attempts reset; their error_log is kept\n", strings.Join(reopened, ", "))
	printReopenable(e, reopenable)
	if !root.Active(dir) {
		// A job whose last tasks failed for good was switched off when its
		// session found no work left.
		fmt.Fprintln(e.Stdout, "The hooks are off (no .harness-active): `harness init` switches them on again.")
	}
	return ExitOK
}

// failedForGood refuses a task retry has nothing to do for: only a failure
// for good is a dead end; a task with attempts left is claimed again as it
// is.
func failedForGood(s *state.State, id string) error {
	t := s.Task(id)
	switch {
	case t == nil:
		return noTask(s, id)
	case t.PermanentlyFailed():
		return nil
	case t.Status == state.Failed:
		return failure.New(failure.Usage, "%s failed %d of %d attempts and is retried as it is", id, t.Attempts, t.MaxAttempts).
			WithHint("`harness claim %s` takes it again; to give it more attempts: harness edit %s --max-attempts N", failure.ShellArg(id), failure.ShellArg(id))
	}
	return failure.New(failure.Usage, "%s is %s, not failed: nothing to reopen", id, t.Status).
		WithHint("`harness status` shows where each task stands")
}

// stillBlocked refuses a retry dependency validation would undo: the
// reopened task would be failed [DEPENDENCY] again at the next claim.
func stillBlocked(s *state.State, m schedule.Mark) error {
	arg := failure.ShellArg(m.ID)
	if cyc := schedule.CycleThrough(s.Tasks, m.ID); cyc != nil {
		return failure.New(failure.Config, "%s would be failed again: it is on a cycle: %s", m.ID, cyc).
			WithHint("leave out one of its links first (harness edit %s --depends-on …), then retry", failure.ShellArg(cyc[0]))
	}
	hint := fmt.Sprintf("fix its dependencies first (harness edit %s --depends-on …), then retry", arg)
	if ids := schedule.Reopenable(s.Tasks); len(ids) > 0 {
		hint += "; these can be reopened together now: harness retry " + strings.Join(ids, " ")
	}
	return failure.New(failure.Config, "%s would be failed again: %s", m.ID, m.Message).WithHint("%s", hint)
}

// shortLine is the first line of s, cut to n bytes at most.
func shortLine(s string, n int) string {
	s = strings.SplitN(s, "\n", 2)[0]
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
