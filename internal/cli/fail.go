package cli

import (
	"fmt"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
)

var failVerb = &command{
	name:    "fail",
	args:    "ID --category CATEGORY MESSAGE",
	summary: "record a failure you found yourself: attempts+1, error_log, rollback to the base (after a snapshot), cleanup",
	run:     runFail,
}

func runFail(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	category := fs.String("category", "", "one of "+strings.Join(failure.Categories, ", "))
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) < 2 {
		return e.fail(e.mineHint(c, "expected a task ID and a MESSAGE", func(id string) string {
			cat, msg := *category, `"what happened"`
			if cat == "" {
				cat = "CATEGORY"
			}
			if len(pos) == 1 {
				msg = failure.ShellArg(pos[0])
			}
			return "harness fail " + id + " --category " + cat + " " + msg
		}))
	}
	if *category == "" {
		return e.fail(usageErr(c, "--category is required (one of %s)", strings.Join(failure.Categories, ", ")))
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	ctx, stop := interruptible()
	defer stop()
	o, err := e.worker(dir).Fail(ctx, pos[0], strings.ToUpper(*category), strings.Join(pos[1:], " "))
	if err != nil {
		return e.failCycle(err)
	}
	t, f := &o.Task, o.Failure
	fmt.Fprintf(e.Stdout, "Failed %s: [%s] %s (attempt %d/%d)\n", t.ID, f.Category, f.Message, t.Attempts, t.MaxAttempts)
	e.printFailure(o)
	return ExitOK
}
