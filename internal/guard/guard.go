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
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/shellscan"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// call is one PreToolUse invocation being decided.
type call struct {
	*project.Project // the state root, opened once for the call
	p                hook.Payload
	cwd              string // where the tool runs
	tool             string
	notes            []string // additionalContext lines
	// completed are the tasks a hand edit of the tasks file completes.
	completed []string

	gateDeadline time.Time // when the completion gate's budget ends

	tracked, unignored map[string]bool // harness files git would touch, asked lazily

	wiring *wired // what keeps the harness running, gathered for a call that writes

	rep *shellscan.Report // a Bash command's analysis, once per call
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
	root.OwnRuntimeDir(dir)
	c := &call{Project: project.Open(dir), p: p, cwd: physical(cwd, dir), tool: p.ToolName()}
	// A change made since the last tool call (a hook that timed out, an
	// edit from outside Claude Code, another worker's verb inside Claude
	// Code's sandbox whose own check after the call is still to come) is
	// judged as the check after a call judges it, by the protocol's rules:
	// a change the verbs could have made is kept, anything else put back
	// before this call is judged. A completion the record does not hold is
	// put back (only the check after its own call runs its validation).
	if res := integrity.Check(c.Project, "a writer outside the harness", integrity.Legal(c.Project)); res.Tampered() {
		c.notes = append(c.notes, res.Message())
	}
	d := c.decide()
	if d.Kind != hook.Deny {
		c.shadowSave()
	}
	if d.Kind == hook.Silent && len(c.notes) > 0 {
		d.Kind = hook.Allow
	}
	if len(c.notes) > 0 {
		d.Context = strings.Join(c.notes, "\n")
	}
	return d
}

// physical is cwd with its symlinks resolved. The state root dir is
// already (root.Find), so a cwd that is the root, as it mostly is, costs
// no walk of its path.
func physical(cwd, dir string) string {
	if cwd == dir {
		return cwd
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		return real
	}
	return cwd
}

func (c *call) decide() hook.Decision {
	if d, denied := c.doomLoop(); denied {
		return d
	}
	if d, denied := c.sandboxEscape(); denied {
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

// summary is the hooks' summary of the tasks file, read once per call.
func (c *call) summary() (*statecache.Summary, error) { return c.Summary() }

// deny builds a denial: the rule's name, what was refused, what to do instead.
func deny(rule, what, instead string) hook.Decision {
	reason := fmt.Sprintf("harness [%s]: %s", rule, what)
	if instead != "" {
		reason += "\nInstead: " + instead
	}
	return hook.Decision{Kind: hook.Deny, Reason: reason}
}

// abs makes a tool's path argument absolute (against the call's cwd), with
// symlinks resolved as far as the path exists.
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
		path = c.cwd + "/" + path
	}
	return resolvePhysical(path)
}

// resolve follows symlinks in the longest existing prefix of path (an
// absolute, clean path).
func resolve(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return resolvePhysical(path)
}

// maxLinks bounds symlink hops, as the kernel does (ELOOP).
const maxLinks = 40

// resolvePhysical resolves an absolute path the way the kernel does:
// component by component, following a symlink before applying a ".." after
// it (a/link/../x is not a/x when link points elsewhere). What does not
// exist is appended as written, cleaned.
func resolvePhysical(path string) string {
	rest := strings.Split(path, "/")
	done := "/"
	hops := 0
	for len(rest) > 0 {
		part := rest[0]
		rest = rest[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			done = next
			continue
		}
		hops++
		target, err := os.Readlink(next)
		if err != nil || hops > maxLinks {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if filepath.IsAbs(target) {
			done = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return done
}

// sameFile names the harness state file that p is another name of (a hard
// link), or "". It costs one Lstat, and more only for a file with several
// links.
func (c *call) sameFile(p string) string {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	if !linked(fi) {
		return ""
	}
	for _, n := range []string{state.FileName, state.FileName + ".bak", root.ProgressFile, root.InitScript} {
		if hf, err := os.Stat(filepath.Join(c.Root, n)); err == nil && os.SameFile(fi, hf) {
			return n
		}
	}
	return ""
}

// harnessName returns the harness file name of target (an absolute, resolved
// path) when it lies in the state root, or "".
func (c *call) harnessName(target string) string {
	rel, err := filepath.Rel(c.Root, target)
	if err != nil || strings.HasPrefix(rel, "..") || !root.IsHarnessFile(rel) {
		return ""
	}
	return filepath.ToSlash(rel)
}
