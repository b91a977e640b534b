// Package guard is the PreToolUse policy: it runs before every tool call and
// makes the protocol structural. The state files change only through the
// harness command, Bash cannot get around that, a session that does not own
// the project's harness cannot mutate it, a task's scope lock holds, a
// looping agent is told and then stopped, and optional command and git
// policies apply.
//
// It is the hottest code in the project. A call that has nothing to do with
// the harness costs a root lookup, a lock-file read and a small runtime file;
// the tasks file is parsed only when the call touches harness files (and the
// cached summary is used for everything else).
package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/summary"
)

// call is one PreToolUse invocation being decided.
type call struct {
	p     hook.Payload
	dir   string // state root
	cwd   string // where the tool runs
	tool  string
	notes []string // additionalContext lines

	sum     *summary.Summary
	sumErr  error
	sumDone bool

	gateDeadline time.Time // when the completion gate's budget ends
}

// Check decides one PreToolUse call.
func Check(p hook.Payload) hook.Decision {
	cwd := p.Cwd()
	if cwd == "" {
		cwd = os.Getenv("CLAUDE_PROJECT_DIR")
	}
	dir := root.Find(cwd)
	if dir == "" || !root.Active(dir) {
		return hook.Decision{}
	}
	if cwd == "" {
		cwd = dir
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	c := &call{p: p, dir: dir, cwd: cwd, tool: p.ToolName()}
	d := c.decide()
	if d.Kind == hook.Silent && len(c.notes) > 0 {
		d.Kind = hook.Allow
	}
	if len(c.notes) > 0 {
		d.Context = strings.Join(c.notes, "\n")
	}
	return d
}

func (c *call) decide() hook.Decision {
	if d, denied := c.doomLoop(); denied {
		return d
	}
	c.sessionWarning()
	c.heartbeat()
	switch c.tool {
	case "Write", "Edit", "MultiEdit":
		return c.fileWrite(c.p.Str("tool_input.file_path"))
	case "NotebookEdit":
		return c.fileWrite(c.p.Str("tool_input.notebook_path"))
	case "Bash":
		return c.bash(c.p.Str("tool_input.command"))
	}
	return hook.Decision{}
}

// summary loads the cached state digest once per call.
func (c *call) summary() (*summary.Summary, error) {
	if !c.sumDone {
		c.sum, c.sumErr = summary.Load(c.dir)
		c.sumDone = true
	}
	return c.sum, c.sumErr
}

// deny builds a denial: the rule's name, what was refused, what to do instead.
func deny(rule, what, instead string) hook.Decision {
	reason := fmt.Sprintf("harness [%s]: %s", rule, what)
	if instead != "" {
		reason += "\nInstead: " + instead
	}
	return hook.Decision{Kind: hook.Deny, Reason: reason}
}

// abs makes a tool's path argument absolute (against the call's cwd), clean,
// and with symlinks resolved as far as the path exists.
func (c *call) abs(path string) string {
	if path == "" {
		return ""
	}
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.cwd, path)
	}
	return resolve(filepath.Clean(path))
}

// resolve follows symlinks in the longest existing prefix of path.
func resolve(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	dir, base := filepath.Split(path)
	dir = filepath.Clean(dir)
	if dir == path || dir == "." || dir == "/" {
		return path
	}
	return filepath.Join(resolve(dir), base)
}

// harnessName returns the harness file name of target (an absolute, resolved
// path) when it lies in the state root, or "".
func (c *call) harnessName(target string) string {
	rel, err := filepath.Rel(c.dir, target)
	if err != nil || strings.HasPrefix(rel, "..") || !root.IsHarnessFile(rel) {
		return ""
	}
	return filepath.ToSlash(rel)
}
