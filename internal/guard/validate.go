package guard

import (
	"context"
	"fmt"
	"time"

	"github.com/harness-agent/harness/internal/validation"
)

// result is the outcome of running a validation command for the gate.
type result struct {
	pass    bool
	outcome string // "fails (exit 1)", "timed out after 5s", …
	tail    string
}

// runValidation runs a task's validation command the way `harness validate`
// does.
func runValidation(dir, command string, timeout time.Duration) result {
	r := validation.Run(context.Background(), dir, command, timeout)
	switch r.Outcome {
	case validation.Pass:
		return result{pass: true, outcome: "passes", tail: r.Tail}
	case validation.Timeout:
		return result{outcome: "timed out after " + timeout.String(), tail: r.Tail}
	case validation.Missing:
		return result{outcome: "cannot run: `" + r.Program + "` is not installed", tail: r.Tail}
	}
	return result{outcome: fmt.Sprintf("fails (exit %d)", r.ExitCode), tail: r.Tail}
}
