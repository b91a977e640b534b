package cli

import (
	"fmt"
)

var sessionVerb = &command{
	name:    "session",
	args:    "start|end",
	summary: "open or close a session without the Claude Code hooks: start counts it (session_count, INIT line), end logs STATS and sets last_session",
	run:     runSession,
}

func runSession(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) != 1 || pos[0] != "start" && pos[0] != "end" {
		return e.fail(usageErr(c, "expected start or end"))
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	w := e.worker(dir)
	if pos[0] == "end" {
		st, err := w.Stats()
		if err != nil {
			return e.fail(err)
		}
		fmt.Fprintln(e.Stdout, "STATS "+st.Line())
		return ExitOK
	}
	o, err := w.StartSession()
	if err != nil {
		return e.failCycle(err)
	}
	if o.OverLimit {
		fmt.Fprintf(e.Stdout, "STOP max_sessions reached: this is session %d\n%s\n", o.Session, o.Stats.Line())
		fmt.Fprintln(e.Stdout, "hint: do no harness work in this session; a human raises session_config.max_sessions to go on")
		return ExitNegative
	}
	fmt.Fprintf(e.Stdout, "Session %d started\n", o.Session)
	if len(o.Interrupted) > 0 {
		fmt.Fprintf(e.Stdout, "interrupted: %d task(s) in progress from an earlier session\nnext: harness recover\n", len(o.Interrupted))
		return ExitOK
	}
	fmt.Fprintln(e.Stdout, "next: harness claim")
	return ExitOK
}
