package guard

import (
	"context"
	"fmt"
	"time"

	"github.com/harness-agent/harness/internal/fence"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/validation"
)

// defaultGateBudget bounds the completion gate. Claude Code kills a
// PreToolUse hook at its settings timeout (30 s for the harness) and a
// killed hook fails open, so the gate must decide well before that, however
// long the task's own validation may run.
const defaultGateBudget = 20 * time.Second

// gateBudget is the time all of one call's gate validations may take:
// HARNESS_GATE_BUDGET (seconds, or a Go duration such as 500ms), else 20 s.
func gateBudget() time.Duration {
	return validation.EnvSeconds("HARNESS_GATE_BUDGET", defaultGateBudget)
}

// result is the outcome of running a validation command for the gate.
type result struct {
	pass    bool
	outcome string // "fails (exit 1)", "timed out after 5s", …
	tail    string
	// overBudget is set when the command was stopped at the guard's budget
	// rather than its own timeout: nothing is known about it.
	overBudget bool
}

// runValidation runs a task's validation command the way `harness validate`
// does, but stops it at the guard's budget (left: what remains of it).
//
// The command is the project's: at the sandboxed level it runs confined,
// and whatever it did to the record is put back and fails it (the caller
// holds the transaction lock and checks the harness files itself).
func runValidation(p *project.Project, id, command string, timeout, left, budget time.Duration) result {
	return runCheck(p, fmt.Sprintf("the validation of %s (`%s`) the guard ran", id, command), command, timeout, left, budget)
}

// runProjectCheck runs session_config.integration_check for completions the
// guard judges, as `harness validate` runs it after a task's own check
// (not with workers: their merge queue runs it on the merged tree); ran is
// false where there is none to run.
func runProjectCheck(p *project.Project, s *state.State, left, budget time.Duration) (res result, ran bool) {
	cmd := s.ProjectCheck()
	if cmd == "" {
		return result{}, false
	}
	return runCheck(p, fmt.Sprintf("session_config.integration_check (`%s`) the guard ran", cmd), cmd, s.Config.IntegrationTimeout(), left, budget), true
}

// runCheck runs command, one of the project's checks (what names it for
// the record's judgement), stopped at timeout or at the guard's budget,
// whichever comes first.
func runCheck(p *project.Project, what, command string, timeout, left, budget time.Duration) result {
	cut := false
	if left < timeout {
		timeout, cut = left, true
	}
	if timeout <= 0 {
		return result{outcome: "was not run: the guard's time budget is spent", overBudget: true}
	}
	f := fence.Hold(p)
	r := f.Run(context.Background(), p.Root, command, timeout)
	if why := f.Record(what); why != "" {
		return result{outcome: "changed harness files, which were put back: " + why, tail: r.Tail}
	}
	if r.Unconfined != "" {
		return result{outcome: "was not run: " + r.Unconfined + " (" + fence.Hint() + ")"}
	}
	switch r.Outcome {
	case validation.Pass:
		return result{pass: true, outcome: "passes", tail: r.Tail}
	case validation.Timeout:
		if cut {
			return result{outcome: "did not finish within the guard's " + budget.String() + " budget", tail: r.Tail, overBudget: true}
		}
		return result{outcome: "timed out after " + timeout.String(), tail: r.Tail}
	case validation.Missing:
		return result{outcome: "cannot run: `" + r.Program + "` is not installed", tail: r.Tail}
	}
	return result{outcome: fmt.Sprintf("fails (exit %d)", r.ExitCode), tail: r.Tail}
}
