package cli

import (
	"fmt"
)

var statsVerb = &command{
	name:    "stats",
	args:    "",
	summary: "append the STATS line to the progress log, set last_session, and print it",
	run:     runStats,
}

func runStats(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	if err := e.parseNone(c, fs, args); err != nil {
		return e.fail(err)
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	st, err := e.worker(dir).Stats()
	if err != nil {
		return e.fail(err)
	}
	fmt.Fprintln(e.Stdout, "STATS "+st.Line())
	return ExitOK
}
