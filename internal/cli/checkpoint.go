package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
)

var checkpointVerb = &command{
	name:    "checkpoint",
	args:    "ID M/N DESCRIPTION",
	summary: "record step M of N of an in-progress task (checkpoints[], CHECKPOINT log line) and renew its lease",
	run:     runCheckpoint,
}

func runCheckpoint(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) < 3 {
		return e.fail(e.mineHint(c, "expected a task ID, a step M/N and a description", func(id string) string {
			if len(pos) == 2 && strings.Contains(pos[0], "/") {
				return "harness checkpoint " + id + " " + failure.ShellArg(pos[0]) + " " + failure.ShellArg(pos[1])
			}
			return "harness checkpoint " + id + ` M/N "what was done"`
		}))
	}
	m, n, ok := strings.Cut(pos[1], "/")
	step, err1 := strconv.Atoi(m)
	total, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return e.fail(usageErr(c, "step %q is not M/N (for example 2/4)", pos[1]))
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	t, err := e.worker(dir).Checkpoint(pos[0], step, total, strings.Join(pos[2:], " "))
	if err != nil {
		return e.failCycle(err)
	}
	fmt.Fprintf(e.Stdout, "%s checkpoint %d/%d recorded (lease until %s)\n", t.ID, step, total, t.LeaseExpiresAt)
	return ExitOK
}
