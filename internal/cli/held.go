package cli

import (
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
)

// A hold is a person's stop of the run: a pause or a cancel. The record
// holds it (internal/record), out of the agent's reach; the pause file in
// the runtime directory only mirrors a pause, and the marker cannot tell
// a cancel from a run switched off or finished.
type hold struct {
	cancelled bool   // cancelled, else paused
	since     string // when the person did it
}

// holdOf is the hold the record's mark m says the run is under (ok: there
// is one). Without a record (ok false from Record.Mark) the pause file
// pausedFile stands in for it.
func holdOf(m record.Mark, pausedFile bool) (hold, bool) {
	switch {
	case m.Cancelled != "":
		return hold{cancelled: true, since: m.Cancelled}, true
	case m.Paused != "":
		return hold{since: m.Paused}, true
	case pausedFile:
		return hold{since: "an unknown time"}, true
	}
	return hold{}, false
}

// heldOf reads the hold of the state root dir.
func heldOf(dir string) (hold, bool) {
	m, _ := record.Of(dir).Mark()
	return holdOf(m, root.Paused(dir))
}

// headline is what status says of the hold on its first line.
func (h hold) headline() string {
	if h.cancelled {
		return "cancelled by the user at " + h.since + ": the hooks are off and the agent's verbs are refused; `harness init` switches them on again"
	}
	return "paused by the user since " + h.since + ": sessions stop at their next turn end and the agent's verbs are refused; `harness resume` continues"
}

// refuse is the error an agent's verb gets under the hold.
func (h hold) refuse(verb string) error {
	if h.cancelled {
		return failure.New(failure.Usage, "the run was cancelled by the user (at %s): harness %s is refused inside a Claude Code session", h.since, verb).
			WithHint("stop here and end your turn; only the user switches the harness on again, with `harness init` in their terminal")
	}
	return failure.New(failure.Usage, "the run is paused by the user (since %s): harness %s is refused inside a Claude Code session", h.since, verb).
		WithHint("stop here and end your turn (a claim you hold is kept); the user continues the run with `harness resume` in their terminal")
}

// heldBack refuses the running verb when the agent runs it, inside a
// Claude Code session, in a run a person paused or cancelled: the pause
// is the person's "stop", and a verb that changes the state is work. The
// views (status, graph, report, export, history, snapshots, budget
// without flags) still answer, and a person at a terminal still runs any
// verb by hand.
func (e *Env) heldBack(dir string) error {
	if e.viewing || e.cmd == nil || e.cmd.view || !e.invoker().InSession() {
		return nil
	}
	if h, ok := heldOf(dir); ok {
		return h.refuse(e.cmd.name)
	}
	return nil
}
