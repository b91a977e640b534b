// Package confine runs a project's command under the operating system's
// sandbox with the policy Claude Code's own sandbox gives the agent's Bash
// tool: the project (or a worker's tree) and the temporary directory
// writable, everything else read-only, the paths the harness trusts (its
// record, its executables, the skill, Claude Code's settings) read-only
// even inside the writable ones, and the network only as the user's
// sandbox settings allow it.
//
// It exists because hooks run outside Claude Code's sandbox: a validation,
// a cleanup or harness-init.sh that a hook starts is code the agent wrote,
// and at the sandboxed level it must meet the same walls as the agent's
// own commands (docs/threat-model.md).
//
// Linux uses bubblewrap (bwrap), which Claude Code's sandbox needs there
// too; macOS uses Seatbelt (sandbox-exec). Where neither can be set up,
// Wrap fails: the caller does not run the command (fail closed).
package confine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/harness-agent/harness/internal/git"
)

// Policy is where a confined command may write and what it may reach.
type Policy struct {
	// Write are the directories the command may write (the project or
	// the worker's tree, the temporary directory, the user's allowWrite).
	Write []string
	// Deny are paths kept read-only even inside Write: the record, the
	// harness's executables, Claude Code's settings, the skill.
	Deny []string
	// Network: the host's network is reachable (the user's sandbox
	// settings allow some); else the command has none.
	Network bool
}

// ErrUnavailable wraps every reason the sandbox cannot be set up.
var ErrUnavailable = errors.New("the OS sandbox cannot be set up")

// Protected are the paths inside a writable project that Claude Code's
// sandbox keeps read-only to the agent's commands (its settings and
// extensions, the repository's hooks and config): confined commands meet
// the same.
var Protected = []string{".claude", ".mcp.json", ".git/hooks", ".git/config"}

// ForTree adds tree (a project's or worker's directory) and the paths
// Claude Code protects inside it to p's writable paths and denials. The
// tree is the git work tree holding dir when there is one, else dir.
func (p Policy) ForTree(dir string) Policy {
	top := git.NearestTop(dir)
	if top == "" {
		top = dir
	}
	q := Policy{Write: slices.Clone(p.Write), Deny: slices.Clone(p.Deny), Network: p.Network}
	q.Write = append(q.Write, top)
	for _, rel := range Protected {
		q.Deny = append(q.Deny, filepath.Join(top, rel))
	}
	return q
}

// TempDirs are the temporary directories a confined command may write: the
// system's and $TMPDIR, as Claude Code's sandbox leaves them writable.
func TempDirs() []string {
	dirs := []string{"/tmp"}
	if t := os.Getenv("TMPDIR"); t != "" && filepath.IsAbs(t) && !within(t, "/tmp") {
		dirs = append(dirs, t)
	}
	return dirs
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// existing keeps the paths that exist, resolved through symlinks (the
// sandboxes bind real paths), without duplicates.
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		if !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out
}
