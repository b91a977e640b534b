package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/integrity"
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
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	c := &call{p: p, dir: dir, cwd: cwd, tool: p.ToolName()}
	res := integrity.Check(dir, c.describe(), c.adopter())
	if !res.Tampered() {
		return hook.Decision{}
	}
	msg := res.Message()
	return hook.Decision{Kind: hook.Block, Reason: msg, Warning: "harness: " + strings.SplitN(msg, "\n", 2)[0]}
}

// adopter returns the judgement of a hand edit of the tasks file when this
// call is an Edit, MultiEdit or Write of it, else nil: nothing else may
// change the file.
func (c *call) adopter() integrity.Adopt {
	switch c.tool {
	case "Edit", "MultiEdit", "Write":
	default:
		return nil
	}
	target := c.abs(c.p.Str("tool_input.file_path"))
	if target == "" || c.harnessName(target) != state.FileName {
		return nil
	}
	return func(before, after []byte) string {
		c.notes = nil
		if d := c.judgeTasks(target, before, string(after)); d.Kind == hook.Deny {
			return d.Reason
		}
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
