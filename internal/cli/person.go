package cli

import (
	"fmt"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/invoker"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
)

// invoker finds who runs this harness command, once per command: a person,
// or an agent inside a Claude Code session (internal/invoker). A live
// holder of the project's session lock that is an ancestor of this
// process is the session too, Claude Code or a shell agent.
func (e *Env) invoker() invoker.Invoker {
	if e.who == nil {
		var o invoker.Options
		if h, alive, ok := e.lockHolder(); ok && alive {
			o.Holders = []int{h.PID}
		}
		w := invoker.Detect(o)
		e.who = &w
	}
	return *e.who
}

// lockHolder reads the session lock of the project the command runs in.
func (e *Env) lockHolder() (h lock.Holder, alive, ok bool) {
	dir := integrity.Root(e.Cwd)
	if dir == "" {
		return lock.Holder{}, false, false
	}
	return lock.Owner(dir)
}

// personOnly refuses verb inside a Claude Code session: pausing, resuming
// and cancelling the run, removing a task, setting limits are the user's
// decisions, and an agent that could cancel could cancel its way out of
// the work. Accepted, the verb is logged with how it was invoked once the
// command has found its state root (stateRoot), so an agent that slipped
// through shows in the log.
func (e *Env) personOnly(verb string) error {
	who := e.invoker()
	if who.InSession() {
		return failure.New(failure.Usage, "harness %s is the user's decision and is refused inside a Claude Code session (%s)", verb, who.Session).
			WithHint("if you are stuck, say so and stop: the Stop hook lets a stuck session end; the user decides with `harness %s` in their terminal", verb)
	}
	e.person = verb
	return nil
}

// personLine is the PERSON log entry of a person-only action: what was
// done, how it was invoked, and the session that held the lock meanwhile.
// note names the flag that allowed the action without a terminal.
func (e *Env) personLine(dir, what, note string) progress.Entry {
	msg := what + " " + e.invoker().How(note)
	if h, alive, ok := lock.Owner(dir); ok && alive {
		msg += "; " + heldBy(h) + " held the session lock"
	}
	return progress.Entry{Time: e.Now(), Session: progress.LastSession(dir), Type: progress.Person, Message: msg}
}

// heldBy names a lock holder in a PERSON line.
func heldBy(h lock.Holder) string {
	if h.SessionID != "" {
		return fmt.Sprintf("session %s (pid %d)", h.SessionID, h.PID)
	}
	return fmt.Sprintf("pid %d", h.PID)
}

// logPerson logs the person-only verb personOnly accepted, once.
func (e *Env) logPerson(dir string) {
	if e.person == "" {
		return
	}
	progress.Append(dir, e.personLine(dir, e.person, ""))
	e.person = ""
}

// suspectPerson is the last PERSON line, among the log's recent ones, of
// an action taken without a terminal while a session held the lock: a
// person's script, or an agent that got out of its session's process
// tree. "" when there is none.
func suspectPerson(dir string) string {
	lines, _ := progress.Tail(dir, 2000)
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if strings.Contains(l, "] "+progress.Person+" ") && strings.Contains(l, " without a terminal") && strings.HasSuffix(l, " held the session lock") {
			return l
		}
	}
	return ""
}
