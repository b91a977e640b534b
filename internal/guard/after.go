package guard

import (
	"time"

	"fmt"
	"os"
	"strings"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/state"
)

// After is the PostToolUse (and PostToolUseFailure) hook: right after a
// tool call it compares the harness files with what the harness last wrote
// and puts back anything else, so a change the guard could not foresee (a
// script, an editor, `git clean -fdx`) is undone before the model's next
// step, and the model is told as part of that tool's result. A hand edit
// of the tasks file through Edit or Write, which the guard allowed before
// it ran, is judged again on what was really written and then adopted.
func After(p hook.Payload) hook.Decision {
	cwd := p.Cwd()
	if cwd == "" {
		cwd = os.Getenv("CLAUDE_PROJECT_DIR")
	}
	dir := integrity.Root(cwd)
	if dir == "" {
		return hook.Decision{}
	}
	c := &call{Project: project.Open(dir), p: p, cwd: physical(cwd, dir), tool: p.ToolName()}
	res := integrity.AfterTool(c.Project, c.describe(), c.adopter())
	if !res.Tampered() {
		return hook.Decision{}
	}
	msg := res.Message()
	return hook.Decision{Kind: hook.Block, Reason: msg, Warning: "harness: " + strings.SplitN(msg, "\n", 2)[0]}
}

// adopter returns the judgement of a change of the tasks file made during
// this call: a hand edit of it (an Edit, MultiEdit or Write of the file) by
// the guard's rules for hand edits, anything else (a verb that could not
// write the record, a script) by the protocol's transition rules.
func (c *call) adopter() integrity.Adopt {
	switch c.tool {
	case "Edit", "MultiEdit", "Write":
	default:
		return c.transition
	}
	target := c.abs(c.p.Str("tool_input.file_path"))
	if target == "" || c.harnessName(target) != state.FileName {
		return c.transition
	}
	return func(before, after []byte) string {
		c.notes, c.completed = nil, nil
		if d := c.judgeTasks(target, before, string(after)); d.Kind == hook.Deny {
			return d.Reason
		}
		// Its completions passed their checks just now; they are checked
		// again at the turn's end like a verb's.
		c.Record().AddUnverified(c.completed...)
		return ""
	}
}

// describe names the tool call for the TAMPER line.
func (c *call) describe() string {
	in := c.p.Get("tool_input")
	var what string
	switch {
	case in.Get("command").Exists():
		what = in.Get("command").String()
	case in.Get("file_path").Exists():
		what = in.Get("file_path").String()
	}
	what = strings.Join(strings.Fields(what), " ")
	if len(what) > 120 {
		what = what[:117] + "..."
	}
	if what == "" {
		return fmt.Sprintf("a %s call", c.tool)
	}
	return fmt.Sprintf("%s `%s`", c.tool, what)
}

// transition judges a change of the tasks file that no harness write
// recorded by the protocol's transition rules (state.JudgeTransition): ""
// adopts it, anything else is why it is put back. Completions are legal
// only once the trusted side saw the validation pass: this hook runs it
// (within the guard's budget) or, past the budget, leaves it to the
// verification gate at the next turn end (Record.AddUnverified).
func (c *call) transition(before, after []byte) string {
	tr, b, a, why := integrity.Judge(c.Project, before, after)
	if why != "" {
		return why
	}
	for _, id := range tr.Added {
		t := a.Task(id)
		for _, cmd := range []string{t.Command, t.Cleanup} {
			if why := StoredCommand(c.Root, c.Root, cmd); why != "" {
				return fmt.Sprintf("%s was added with a command the policy refuses: %s", id, why)
			}
		}
	}
	was := byID(b)
	for i := range a.Tasks {
		// A validation set where there was none meets the same policy.
		t := &a.Tasks[i]
		if old := was[t.ID]; old != nil && old.Command != t.Command {
			if why := StoredCommand(c.Root, c.Root, t.Command); why != "" {
				return fmt.Sprintf("%s's validation is refused: %s", t.ID, why)
			}
		}
	}
	var later []string
	budget := gateBudget()
	deadline := time.Now().Add(budget)
	for _, id := range tr.Completed {
		t := a.Task(id)
		res := runValidation(c.Project, id, t.Command, t.Timeout(), time.Until(deadline), budget)
		switch {
		case res.pass:
		case res.overBudget:
			later = append(later, id)
		default:
			return fmt.Sprintf("%s cannot be completed: its validation `%s` %s", id, t.Command, res.outcome)
		}
	}
	if len(tr.Completed) > 0 {
		// The project's check, as harness validate runs it after a task's
		// own: a completion that breaks the project is put back. Past the
		// budget it is left to the verification gate, which runs it at
		// the next turn end the run may end at, like a validation past
		// the budget (at the sandboxed level every honest validate's
		// completion comes this way: a suite longer than the budget must
		// not put it back).
		res, ran := runProjectCheck(c.Project, b, time.Until(deadline), budget)
		switch {
		case !ran || res.pass:
		case res.overBudget:
			later = append(later, tr.Completed...)
		default:
			return fmt.Sprintf("%s cannot be completed: session_config.integration_check `%s` %s (complete a task with `harness validate`, which runs it with its own timeout)",
				strings.Join(tr.Completed, ", "), b.ProjectCheck(), res.outcome)
		}
	}
	c.Record().AddUnverified(later...)
	// A completion adopted here is checked again at the turn's end like a
	// verb's: what its check read may be gone by then (a file removed
	// right after the hook ran it).
	c.Record().AddUnverified(tr.Completed...)
	return ""
}
