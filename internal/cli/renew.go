package cli

import (
	"fmt"
)

var renewVerb = &command{
	name:    "renew",
	args:    "[ID]",
	summary: "push the lease of this worker's in-progress tasks (or ID) forward by HARNESS_LEASE_SECONDS",
	run:     runRenew,
}

func runRenew(e *Env, c *command, args []string) int {
	id, dir, err := e.optionalTarget(c, e.flags(c), args)
	if err != nil {
		return e.fail(err)
	}
	w := e.worker(dir)
	renewed, err := w.Renew(id)
	if err != nil {
		return e.failCycle(err)
	}
	if len(renewed) == 0 {
		fmt.Fprintf(e.Stdout, "nothing to renew: no task in progress is claimed by %s\n", w.ID)
		return ExitOK
	}
	for _, t := range renewed {
		fmt.Fprintf(e.Stdout, "renewed %s until %s\n", t.ID, t.LeaseExpiresAt)
	}
	return ExitOK
}
