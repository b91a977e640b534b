package cli

// Helpers shared by the task-cycle verbs (claim, checkpoint, validate, fail,
// recover, renew, snapshots): they all drive a taskcycle.Worker.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/taskcycle"
	"github.com/harness-agent/harness/internal/validation"
)

// worker returns this process's worker for the state root dir.
func (e *Env) worker(dir string) *taskcycle.Worker {
	w := taskcycle.New(dir, e.Cwd)
	w.Now = e.Now
	w.Person = !e.invoker().InSession()
	return w
}

// failCycle reports an error of the cycle. Errors about one task keep the
// protocol's "ERROR [task-id] [CATEGORY] message" form.
func (e *Env) failCycle(err error) int {
	var te *taskcycle.TaskError
	if !errors.As(err, &te) {
		return e.fail(err)
	}
	fmt.Fprintln(e.Stderr, te.Error())
	if te.Err.Hint != "" {
		fmt.Fprintln(e.Stderr, "hint: "+te.Err.Hint)
	}
	return exitCode(te.Err.Category)
}

func exitCode(category string) int {
	switch category {
	case failure.Usage, failure.Config, failure.EnvSetup:
		return ExitError
	}
	return ExitNegative
}

// interruptible returns a context ended by SIGINT or SIGTERM, so a long
// validation is killed with its process group rather than orphaned.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// tailLines is how much validation output a failing verb shows.
const tailLines = 20

// printTail writes the last lines of a validation's output, indented.
func (e *Env) printTail(r *validation.Result) {
	out := strings.TrimRight(r.Tail, "\n")
	if out == "" {
		return
	}
	lines := strings.Split(out, "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	fmt.Fprintf(e.Stderr, "--- output (last %d lines) ---\n", len(lines))
	for _, l := range lines {
		fmt.Fprintln(e.Stderr, "  "+l)
	}
	fmt.Fprintln(e.Stderr, "---")
}

// printFailure explains a recorded failure: the rollback, the snapshot and
// what to do next.
func (e *Env) printFailure(o *taskcycle.Outcome) {
	f, t := o.Failure, &o.Task
	w := e.Stderr
	switch {
	case f.RolledBack:
		fmt.Fprintf(w, "rolled back to %s; the attempt is saved as %s\n", git.Short(f.Base), f.Snapshot)
		fmt.Fprintf(w, "restore its files with: %s\n", git.RestoreCommand(o.Tree.Top, f.Snapshot))
	default:
		fmt.Fprintf(w, "not rolled back: %s\n", f.NotRolledBack)
	}
	if c := f.Cleanup; c != nil {
		if c.Outcome == validation.Pass {
			fmt.Fprintf(w, "on_failure.cleanup ran (%s)\n", c.Took.Round(1e6))
		} else {
			fmt.Fprintf(w, "WARN on_failure.cleanup %s: %s\n", c.Outcome, c.FirstLine)
		}
		if fence := f.CleanupFence; fence != nil {
			fmt.Fprintf(w, "WARN [%s] on_failure.cleanup changed harness files; they were put back: %s\n", failure.Tamper, fence.Files())
		}
	}
	switch {
	case f.Permanent && len(f.Dependents) > 0:
		fmt.Fprintf(w, "hint: %s is now permanently failed (%d/%d attempts); %s, which depend on it, are blocked: a person decides (`harness retry %s` reopens it with its attempts reset; or raise max_attempts with `harness edit %s --max-attempts N`, split the task, or change the plan)\n", t.ID, t.Attempts, t.MaxAttempts, strings.Join(f.Dependents, ", "), failure.ShellArg(t.ID), failure.ShellArg(t.ID))
	case f.Permanent:
		fmt.Fprintf(w, "hint: %s is now permanently failed (%d/%d attempts); no task depends on it: a person decides (`harness retry %s` reopens it with its attempts reset; or raise max_attempts with `harness edit %s --max-attempts N`, or change the plan)\n", t.ID, t.Attempts, t.MaxAttempts, failure.ShellArg(t.ID), failure.ShellArg(t.ID))
	default:
		fmt.Fprintf(w, "hint: attempt %d/%d failed; fix the cause, then retry with `harness claim %s` (or take the next task with `harness claim`)\n", t.Attempts, t.MaxAttempts, failure.ShellArg(t.ID))
	}
}

// mineHint is usageErr for a verb of the cycle called without its task
// ID, with the hint naming the task in progress this command would act on
// (the ID it most likely meant) and the command, as fix writes it with
// that ID.
func (e *Env) mineHint(c *command, msg string, fix func(id string) string) error {
	id := e.inProgress()
	if id == "" {
		return usageErr(c, "%s", msg)
	}
	return failure.New(failure.Usage, "%s", msg).WithHint("%s is the task in progress: %s", id, fix(id))
}

// inProgress is the task that keeps this worker from claiming another, as
// claim and next see it (taskcycle.Worker.Busy): in exclusive mode the one
// in progress, whichever shell claimed it; in concurrent mode this
// worker's own. "" when there is none, or no state to read.
func (e *Env) inProgress() string {
	dir, err := e.stateRoot()
	if err != nil {
		return ""
	}
	s, err := state.Load(dir)
	if err != nil {
		return ""
	}
	if t := e.worker(dir).Busy(s); t != nil {
		return t.ID
	}
	return ""
}
