package cli

import (
	"fmt"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/validation"
)

var validateVerb = &command{
	name:    "validate",
	args:    "ID",
	summary: "run the task's validation.command: PASS commits and completes it, FAIL/TIMEOUT fails it and rolls back (exit 1)",
	run:     runValidate,
}

func runValidate(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	switch len(pos) {
	case 0:
		return e.fail(e.mineHint(c, "expected exactly one task ID", func(id string) string { return "harness validate " + id }))
	case 1:
	default:
		return e.fail(usageErr(c, "expected exactly one task ID"))
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	ctx, stop := interruptible()
	defer stop()
	o, err := e.worker(dir).Validate(ctx, pos[0])
	if err != nil {
		return e.failCycle(err)
	}
	t := &o.Task
	r := o.Check
	if in := o.Integration; in != nil || o.Queued {
		fmt.Fprintf(e.Stdout, "PASS %s in this worker's tree (%s, %s); queued for integration as %s\n", t.ID, t.Command, r.Took.Round(1e6), git.Short(o.Commit))
		switch {
		case o.Supervised:
			fmt.Fprintf(e.Stdout, "%s waits in the merge queue (validated, not yet integrated): the supervisor of `harness workers` integrates it\n", t.ID)
			fmt.Fprintln(e.Stdout, "next: harness claim")
			return ExitOK
		case o.Queued:
			fmt.Fprintf(e.Stdout, "%s waits in the merge queue (validated, not yet integrated)", t.ID)
			if o.QueueErr != nil {
				fmt.Fprintf(e.Stdout, ": %v", o.QueueErr)
			}
			fmt.Fprintln(e.Stdout, "\nnext: harness claim (the queue integrates it; `harness integrate` runs it now)")
			return ExitOK
		case o.Completed:
			fmt.Fprintf(e.Stdout, "Completed %s: %s (integrated as %s after its validation passed on the merged tree)\n", t.ID, t.Title, git.Short(in.Merged))
			fmt.Fprintln(e.Stdout, afterCompletion(dir))
			return ExitOK
		}
		f := o.Failure
		fmt.Fprintf(e.Stderr, "ERROR [%s] [%s] %s\n", t.ID, f.Category, f.Message)
		if in.Check != nil {
			e.printTail(in.Check)
		}
		e.printFailure(o)
		return ExitNegative
	}
	if o.Completed {
		fmt.Fprintf(e.Stdout, "PASS %s (%s, %s)\n", t.ID, t.Command, r.Took.Round(1e6))
		if pc := o.ProjectCheck; pc != nil {
			fmt.Fprintf(e.Stdout, "PASS integration_check (%s, %s)\n", pc.Command, pc.Took.Round(1e6))
		}
		if v := o.Review; v != nil {
			fmt.Fprintf(e.Stdout, "REVIEW PASS %s (%s, %d tokens): %s\n", t.ID, v.Took.Round(1e6), v.Tokens, v.Reasons)
		}
		how := "committed as"
		if !o.NewCommit {
			how = "nothing new to commit; work is in"
		}
		fmt.Fprintf(e.Stdout, "Completed %s: %s (%s %s)\n", t.ID, t.Title, how, git.Short(o.Commit))
		fmt.Fprintln(e.Stdout, afterCompletion(dir))
		return ExitOK
	}
	f := o.Failure
	fmt.Fprintf(e.Stderr, "ERROR [%s] [%s] %s\n", t.ID, f.Category, f.Message)
	if pc := o.ProjectCheck; pc != nil && (pc.Outcome != validation.Pass || f.Category == failure.Tamper) {
		fmt.Fprintf(e.Stderr, "the validation passed (%s, %s) but session_config.integration_check, the project's check every completion passes too, did not:\n", t.Command, r.Took.Round(1e6))
		fmt.Fprintln(e.Stderr, checkLine(&pc.Result, pc.Command, pc.Limit))
		e.printTail(&pc.Result)
	} else if v := o.Review; v != nil {
		fmt.Fprintf(e.Stderr, "the validation passed (%s) but the reviewer failed the attempt (%s, %d tokens); its reasons are the next attempt's to address\n", t.Command, v.Took.Round(1e6), v.Tokens)
	} else if r != nil {
		fmt.Fprintln(e.Stderr, checkLine(r, t.Command, t.Timeout()))
		e.printTail(r)
	}
	e.printFailure(o)
	return ExitNegative
}

// checkLine is the one line of how check command ended: its outcome, its
// time and exit status (or the limit it ran into), and the first line it
// said.
func checkLine(r *validation.Result, command string, limit time.Duration) string {
	line := fmt.Sprintf("%s %s after %s (exit %d)", r.Outcome, command, r.Took.Round(1e6), r.ExitCode)
	if r.Outcome == validation.Timeout {
		line = fmt.Sprintf("TIMEOUT %s after %s (limit %s)", command, r.Took.Round(1e6), limit)
	}
	if r.FirstLine != "" {
		line += ": " + r.FirstLine // what the check said (a check that passed says nothing)
	}
	return line
}

// afterCompletion is the next step once a task completed: the next claim,
// unless that was the last task (a claim would only say so).
func afterCompletion(dir string) string {
	if s, err := state.Load(dir); err == nil && schedule.Explain(s.Tasks) == schedule.AllDone {
		return "next: none: " + string(schedule.AllDone) + " (`harness status` shows the run)"
	}
	return "next: harness claim"
}
