package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/state"
)

const (
	ruleState    = "state-files"
	ruleProgress = "append-only-log"
	ruleGate     = "completion-gate"
)

// fileWrite decides a Write/Edit/MultiEdit/NotebookEdit of target.
func (c *call) fileWrite(path string) hook.Decision {
	target := c.abs(path)
	if target == "" {
		return hook.Decision{}
	}
	if d, denied := c.wiringWrite(path, target); denied {
		return d
	}
	if d, denied := c.programWrite(path, target); denied {
		return d
	}
	name := c.harnessName(target)
	if name == "" {
		if n := c.sameFile(target); n != "" {
			return deny(ruleState, fmt.Sprintf("%s is a hard link of %s: writing it rewrites the harness file (%s on %s).", path, n, c.tool, path),
				"remove the link with `rm "+path+"` and write a file of your own.")
		}
		return c.scopeCheck(target, c.tool+" "+path)
	}
	if d, denied := c.lockCheck(c.tool + " " + name); denied {
		return d
	}
	switch {
	case name == state.FileName:
		return c.tasksWrite(target)
	case name == root.ProgressFile:
		return c.progressWrite(target)
	case name == root.ActiveMarker:
		return hook.Decision{} // activating the harness
	case name == root.InitScript:
		return deny(ruleInit, fmt.Sprintf("harness-init.sh runs at every session start, outside this guard, so it is the user's to change (%s on %s).", c.tool, path),
			"ask the user to change harness-init.sh; put one-off set-up commands in your own Bash calls.")
	}
	return deny(ruleState, fmt.Sprintf("%s is managed by the harness itself (%s on %s).", name, c.tool, path),
		"leave harness files alone; `harness status` shows the state and `harness help` lists the commands that change it.")
}

// proposed computes the file content the tool call would leave, and whether
// the call could be understood.
func (c *call) proposed(current string) (string, bool) {
	in := c.p.Get("tool_input")
	switch c.tool {
	case "Write":
		return in.Get("content").String(), in.Get("content").Exists()
	case "Edit":
		return applyEdit(current, in)
	case "MultiEdit":
		out := current
		ok := true
		in.Get("edits").ForEach(func(_, e gjson.Result) bool {
			out, ok = applyEdit(out, e)
			return ok
		})
		return out, ok
	}
	return "", false
}

// applyEdit applies one Edit (old_string → new_string, optionally all).
func applyEdit(s string, e gjson.Result) (string, bool) {
	old, repl := e.Get("old_string").String(), e.Get("new_string").String()
	if old == "" || !strings.Contains(s, old) {
		return s, false
	}
	if e.Get("replace_all").Bool() {
		return strings.ReplaceAll(s, old, repl), true
	}
	return strings.Replace(s, old, repl, 1), true
}

// tasksWrite is the invariant check on a hand edit of harness-tasks.json.
func (c *call) tasksWrite(target string) hook.Decision {
	if c.tool == "NotebookEdit" {
		return deny(ruleState, "harness-tasks.json is not a notebook.", "use the harness command.")
	}
	currentRaw, err := safefile.ReadFile(target, state.MaxFileSize)
	if err != nil {
		return deny(ruleState, fmt.Sprintf("cannot read harness-tasks.json to check the %s: %v.", c.tool, err), "use the harness command.")
	}
	next, ok := c.proposed(string(currentRaw))
	if !ok {
		return deny(ruleState, fmt.Sprintf("could not apply the %s to harness-tasks.json (old_string not found or malformed input).", c.tool),
			"change the state with the harness command (`harness help`).")
	}
	return c.judgeTasks(target, currentRaw, next)
}

// judgeTasks decides whether the tasks file at target may go from
// currentRaw to next by hand: before the edit (PreToolUse) and again after
// it (PostToolUse, before the edit is adopted into the harness's record).
func (c *call) judgeTasks(target string, currentRaw []byte, next string) hook.Decision {
	after, err := state.Parse([]byte(next), target)
	if corrupt := (*state.Corrupt)(nil); errors.As(err, &corrupt) {
		return deny(ruleState, "the edit leaves harness-tasks.json as invalid JSON.", "change the state with the harness command (`harness help`).")
	}
	if err != nil {
		return deny(ruleState, "the edit breaks the state schema: "+err.Error(), "change the state with the harness command (`harness help`).")
	}
	before, err := state.Parse(currentRaw, target)
	if err != nil {
		// The current file is already broken: let the protocol repair it.
		return deny(ruleState, "harness-tasks.json is currently unreadable ("+err.Error()+"); hand edits are not the way to repair it.",
			"run `harness status` (a corrupt file is restored from harness-tasks.json.bak by any state-changing command) or ask the user.")
	}
	// Tasks are matched by id through a map: a lookup per task would make
	// an edit of a 10,000-task file quadratic.
	beforeByID, afterByID := byID(before), byID(after)
	if why := brokenInvariant(before, afterByID, after.SessionCount); why != "" {
		return deny(ruleState, why, "use the harness command: `harness claim`, `harness checkpoint`, `harness validate ID`, `harness fail ID --category C MSG`, `harness add`.")
	}
	if !state.SameJSON(gjson.GetBytes(currentRaw, "session_config").Raw, gjson.Get(next, "session_config").Raw) {
		return deny(ruleState, "session_config may not be changed by hand (it holds the policies: allowed_commands, concurrency_mode, max_sessions, …).",
			"no harness verb changes it: ask the user to edit session_config.")
	}
	// A command stored by hand meets the rules a command stored with
	// `harness add` meets: the harness will run it later, outside this
	// guard.
	for i := range after.Tasks {
		t := &after.Tasks[i]
		var wasCommand, wasCleanup string
		if old := beforeByID[t.ID]; old != nil {
			wasCommand, wasCleanup = old.Command, old.Cleanup
		}
		for _, stored := range []struct{ field, now, was string }{
			{"validation.command", t.Command, wasCommand},
			{"on_failure.cleanup", t.Cleanup, wasCleanup},
		} {
			if stored.now == stored.was {
				continue
			}
			if why := StoredCommand(c.Root, c.Root, stored.now); why != "" {
				return deny(ruleState, fmt.Sprintf("%s's %s %q is refused: %s", t.ID, stored.field, stored.now, why),
					"store a command that only checks the work, with `harness add`.")
			}
		}
	}
	var newlyCompleted []*state.Task
	for i := range after.Tasks {
		t := &after.Tasks[i]
		// A task added already completed passes the gate like one that
		// turned completed.
		if old := beforeByID[t.ID]; (old == nil || old.Status != state.Completed) && t.Status == state.Completed {
			newlyCompleted = append(newlyCompleted, t)
		}
	}
	for _, t := range newlyCompleted {
		if d, denied := c.completionGate(t, before.Config); denied {
			return d
		}
	}
	if len(newlyCompleted) > 0 {
		if d, denied := c.projectGate(before, newlyCompleted[0].ID); denied {
			return d
		}
	}
	for _, t := range newlyCompleted {
		c.completed = append(c.completed, t.ID)
	}
	if len(newlyCompleted) > 0 {
		c.notes = append(c.notes, fmt.Sprintf("harness: the validation of %s passes, so this edit is allowed; next time use `harness validate %s`, which also commits the work and logs it.",
			newlyCompleted[0].ID, newlyCompleted[0].ID))
	}
	return hook.Decision{}
}

// byID indexes the tasks of s by id (ids are unique: Parse refuses
// duplicates).
func byID(s *state.State) map[string]*state.Task {
	m := make(map[string]*state.Task, len(s.Tasks))
	for i := range s.Tasks {
		m[s.Tasks[i].ID] = &s.Tasks[i]
	}
	return m
}

// brokenInvariant names the first protocol invariant the edit breaks, or "".
// after holds the proposed state's tasks by id.
func brokenInvariant(before *state.State, after map[string]*state.Task, afterCount int) string {
	if afterCount < before.SessionCount {
		return fmt.Sprintf("session_count may not go down (%d → %d).", before.SessionCount, afterCount)
	}
	for i := range before.Tasks {
		if after[before.Tasks[i].ID] == nil {
			return fmt.Sprintf("task %s would be removed; tasks are never deleted.", before.Tasks[i].ID)
		}
	}
	for i := range before.Tasks {
		// The schema says what a hand edit may do to each member.
		if broken := state.HandEditBreaks(&before.Tasks[i], after[before.Tasks[i].ID]); broken != "" {
			return broken
		}
	}
	return ""
}

// completionGate allows a hand-made completion only if the task's validation
// passes right now, within the guard's time budget (shared by every task
// the edit completes), and the task has no reviewer: only `harness
// validate` runs the reviewer (cfg is session_config, which a hand edit may
// not change).
func (c *call) completionGate(t *state.Task, cfg state.Config) (hook.Decision, bool) {
	if t.Reviewed(cfg) {
		return deny(ruleGate, fmt.Sprintf("%s has a reviewer, so it cannot be marked completed by hand: its reviewer judges the work after its validation passes.", t.ID),
			"run `harness validate "+t.ID+"`."), true
	}
	if t.Command == "" {
		return deny(ruleGate, fmt.Sprintf("%s has no validation.command, so it cannot be marked completed.", t.ID),
			"ask the user for an objective check; a task is completed only by `harness validate "+t.ID+"`."), true
	}
	left, budget := c.gateLeft()
	res := runValidation(c.Project, t.ID, t.Command, t.Timeout(), left, budget)
	if res.pass {
		return hook.Decision{}, false
	}
	what := fmt.Sprintf("%s cannot be marked completed: its validation `%s` %s.", t.ID, t.Command, res.outcome)
	if tail := strings.TrimRight(res.tail, "\n"); tail != "" {
		what += "\n" + tail
	}
	if res.overBudget {
		return deny(ruleGate, what,
			fmt.Sprintf("use `harness validate %s`, which runs the check with its own timeout (%s), records the result and commits the work.", t.ID, t.Timeout())), true
	}
	return deny(ruleGate, what,
		fmt.Sprintf("fix the work until the check passes, then run `harness validate %s`.", t.ID)), true
}

// gateLeft is what is left of the gate's budget for this call, which every
// check the gate runs shares (the budget starts with the first), and the
// budget itself.
func (c *call) gateLeft() (left, budget time.Duration) {
	budget = gateBudget()
	if c.gateDeadline.IsZero() {
		c.gateDeadline = time.Now().Add(budget)
	}
	return time.Until(c.gateDeadline), budget
}

// projectGate holds a hand-made completion to the project's check too
// (session_config.integration_check), as `harness validate` does, within
// what is left of the gate's budget; id is the first task it completes.
func (c *call) projectGate(s *state.State, id string) (hook.Decision, bool) {
	left, budget := c.gateLeft()
	res, ran := runProjectCheck(c.Project, s, left, budget)
	if !ran || res.pass {
		return hook.Decision{}, false
	}
	what := fmt.Sprintf("%s cannot be marked completed: session_config.integration_check `%s`, the project's check every completion passes too, %s.", id, s.ProjectCheck(), res.outcome)
	if tail := strings.TrimRight(res.tail, "\n"); tail != "" {
		what += "\n" + tail
	}
	if res.overBudget {
		return deny(ruleGate, what, fmt.Sprintf("use `harness validate %s`, which runs both checks with their own timeouts, records the result and commits the work.", id)), true
	}
	return deny(ruleGate, what, fmt.Sprintf("fix the work until both checks pass, then run `harness validate %s`.", id)), true
}

// progressWrite keeps harness-progress.txt append-only.
func (c *call) progressWrite(target string) hook.Decision {
	if c.tool != "Write" {
		return deny(ruleProgress, fmt.Sprintf("harness-progress.txt is append-only; %s would rewrite existing lines.", c.tool),
			"append with Bash: `echo \"…\" >> harness-progress.txt` (the harness command logs its own steps).")
	}
	current, err := safefile.ReadFile(target, record.MaxLog)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return deny(ruleProgress, "cannot read harness-progress.txt to check the write.", "append with `>>`.")
	}
	if !strings.HasPrefix(c.p.Str("tool_input.content"), string(current)) {
		return deny(ruleProgress, "harness-progress.txt is append-only; this Write does not keep the existing content.",
			"append with Bash: `echo \"…\" >> harness-progress.txt`.")
	}
	return hook.Decision{}
}
