package taskcycle

import (
	"context"
	"fmt"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/fence"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/validation"
)

// CheckRun is a check the harness ran besides a task's validation: its
// command, its time limit and how it ended.
type CheckRun struct {
	Command string
	Limit   time.Duration
	validation.Result
}

// projectCheck runs session_config.integration_check in the tree once the
// validation v of claim t passed, where no merge queue runs it (with
// workers the queue runs it on the merged tree): a task that passes its own
// check while it breaks the project's is not done. ran is the check's
// result (nil when there is none); o and err are nil when it passed (the
// caller goes on to complete the task), else the failed attempt (its
// Check the validation, ProjectCheck the check) or the error of a check
// that could not run, which records nothing.
func (w *Worker) projectCheck(ctx context.Context, s *state.State, t state.Task, tree Tree, v validation.Result) (ran *CheckRun, o *Outcome, err error) {
	cmd := s.ProjectCheck()
	if cmd == "" {
		return nil, nil, nil
	}
	timeout := s.Config.IntegrationTimeout()
	f := fence.Open(w.Project())
	r := f.Run(ctx, tree.Dir, cmd, timeout)
	ran = &CheckRun{Command: cmd, Limit: timeout, Result: r}
	switch fc := f.Close(fmt.Sprintf("the integration check of %s (`%s`)", t.ID, cmd)); {
	case fc.Tampered():
		o, err = w.fail(ctx, t, tree, failure.Tamper, "integration_check changed harness files, which were put back: "+fc.Files(), true)
		if o != nil {
			o.Fence = &fc
		}
	case ctx.Err() != nil:
		return ran, nil, failure.New(failure.TaskExec, "integration check of %s interrupted: nothing recorded", t.ID).
			WithHint("run `harness validate %s` again", failure.ShellArg(t.ID))
	case r.Outcome == validation.Pass:
		return ran, nil, nil
	case r.Outcome == validation.Missing:
		return ran, nil, w.notRun(s, &t, r, "integration_check", "integration_check's program")
	case r.Outcome == validation.Timeout:
		o, err = w.fail(ctx, t, tree, failure.Timeout, fmt.Sprintf("integration_check exceeded %ds after the validation passed", int(timeout.Seconds())), true)
	default:
		o, err = w.fail(ctx, t, tree, failure.TestFail, "integration_check failed after the validation passed: "+r.FirstLine, true)
	}
	if o != nil {
		o.Check, o.ProjectCheck = &v, ran
	}
	return ran, o, err
}
