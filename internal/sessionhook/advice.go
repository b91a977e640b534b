package sessionhook

import (
	"fmt"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/taskcycle"
)

// The exact commands the hooks hand to the agent. One place, so the words
// the model reads always match the harness verbs.
func claimCmd(id string) string    { return "harness claim " + failure.ShellArg(id) }
func validateCmd(id string) string { return "harness validate " + failure.ShellArg(id) }

// recoverCmd carries out the recovery decision matrix for every interrupted
// task the session may recover.
const recoverCmd = "harness recover"

// reminder is the three-line reminder of the task execution cycle.
const reminder = `cycle: 1) harness claim [<id>] (records the base commit; one task at a time)
       2) work; after each significant step: harness checkpoint <id> M/N "what was done"
       3) harness validate <id> (PASS: completed + commit; FAIL: rollback, attempts+1); then claim the next`

// nextStep says the one thing the agent should do next, with the exact
// command, given the work that remains ("" when none does). detail, when
// not nil, adds what the full state says of a task (its last checkpoint, its
// attempts).
func nextStep(w work, detail func(id string) string) string {
	more := func(id string) string {
		if detail == nil {
			return ""
		}
		return detail(id)
	}
	switch {
	case len(w.own) > 0:
		t := w.own[0]
		return fmt.Sprintf("continue %s (in progress, yours%s), then run `%s`", describe(t.ID, t.Title), more(t.ID), validateCmd(t.ID))
	case len(w.abandoned) > 0:
		t := w.abandoned[0]
		return fmt.Sprintf("run `%s` (%s is in progress under an expired lease)", recoverCmd, describe(t.ID, t.Title))
	case w.next != nil && w.nextUnchecked:
		// A claim refuses a task that no command can ever complete: the
		// step before it is the check, which the agent may give a task
		// that has none.
		return fmt.Sprintf("give %s a validation command first, `%s` (a command that exits 0 once its work is done: a claim refuses a task without one), then run `%s`", describe(w.next.ID, w.next.Title), taskcycle.CheckCommand(w.next.ID), claimCmd(w.next.ID))
	case w.next != nil && w.concurrent:
		return fmt.Sprintf("run `harness claim` to start the next eligible task (other workers claim too; %s is first in line%s)", describe(w.next.ID, w.next.Title), more(w.next.ID))
	case w.next != nil:
		return fmt.Sprintf("run `%s` to start %s%s", claimCmd(w.next.ID), describe(w.next.ID, w.next.Title), more(w.next.ID))
	}
	return ""
}

// details describes tasks of s by id: the last checkpoint of one in
// progress, the attempts of one tried before.
func details(s *state.State) func(id string) string { return detailsBy(s.Task) }

// detailsBy is details with the task found by lookup.
func detailsBy(lookup func(id string) *state.Task) func(id string) string {
	return func(id string) string {
		t := lookup(id)
		switch {
		case t == nil:
			return ""
		case t.Status == state.InProgress:
			return lastCheckpoint(t)
		}
		return attemptsNote(t)
	}
}

// lastCheckpoint describes t's last checkpoint, "" when it has none.
func lastCheckpoint(t *state.Task) string {
	if len(t.Checkpoints) == 0 {
		return ""
	}
	c := t.Checkpoints[len(t.Checkpoints)-1]
	return fmt.Sprintf("; last checkpoint step=%d/%d %q", c.Step, c.Total, clip(c.Description, 120))
}

// attemptsNote says how often t was tried, "" for a fresh task.
func attemptsNote(t *state.Task) string {
	if t.Attempts == 0 {
		return ""
	}
	note := fmt.Sprintf(" (attempt %d of %d", t.Attempts+1, t.MaxAttempts)
	if n := len(t.ErrorLog); n > 0 {
		note += "; last error: " + clip(t.ErrorLog[n-1], 160)
	}
	return note + ")"
}

// clip shortens s to about n bytes on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut-- // do not split a UTF-8 sequence
	}
	return s[:cut] + "…"
}
