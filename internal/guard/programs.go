package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/settings"
)

const ruleSandboxPaths = "sandbox-paths"

// programWrite refuses, at the sandboxed level, a file tool's write to a
// file that names or holds programs run outside Claude Code's sandbox: a
// repository's configuration or hooks (git runs what they name: a file
// system monitor, filter and diff drivers, hooks; git is run from outside
// the sandbox by the harness's hooks, the merge queue and a person) and
// the project's MCP servers (.mcp.json, which Claude Code starts itself);
// also a work tree's .git file, which names the directory git takes them
// from.
// Claude Code's sandbox keeps the agent's commands off these paths;
// Write and Edit are not sandboxed, so the guard keeps them off too. At
// the standard level the agent's commands reach them anyway, and nothing
// is refused.
func (c *call) programWrite(path, target string) (hook.Decision, bool) {
	what := programPath(target, c.Root, git.NearestTop(c.cwd), os.Getenv("CLAUDE_PROJECT_DIR"))
	if what == "" || !c.sandboxed() {
		return hook.Decision{}, false
	}
	return deny(ruleSandboxPaths, fmt.Sprintf("%s on %s: that is %s, which runs outside Claude Code's sandbox; at the sandboxed level only the user changes it.", c.tool, path, what),
		"leave it as it is (reading it is fine); if the task truly needs a change there, ask the user to make it."), true
}

// programPath names what target (absolute, resolved) is when it is a file
// that names or holds programs run outside the sandbox, "" otherwise.
// tops are the project's directories, where Claude Code reads .mcp.json.
func programPath(target string, tops ...string) string {
	if i := strings.Index(target, "/.git/"); i >= 0 {
		if what := gitProgramFile(strings.Split(target[i+len("/.git/"):], "/")); what != "" {
			return what
		}
	}
	if filepath.Base(target) == ".git" {
		// A linked worktree's or a submodule's "gitdir: …" file: git
		// takes the configuration and hooks of the directory it names.
		return "a work tree's pointer to its git directory (git runs what that directory's configuration names)"
	}
	if filepath.Base(target) == ".mcp.json" {
		for _, top := range tops {
			if top != "" && filepath.Dir(target) == top {
				return "the project's MCP servers (Claude Code starts them)"
			}
		}
	}
	return ""
}

// gitProgramFile names the file at parts (a path inside a git directory)
// when git runs what it names: the configuration or a hook, of the
// repository, one of its worktrees or a submodule's (modules/NAME/…).
func gitProgramFile(parts []string) string {
	for len(parts) > 2 && (parts[0] == "modules" || parts[0] == "worktrees") {
		parts = parts[2:]
	}
	switch {
	case len(parts) == 1 && (parts[0] == "config" || parts[0] == "config.worktree"):
		return "a git repository's configuration (it names programs git runs: a file system monitor, filter and diff drivers, a hooks directory)"
	case len(parts) > 1 && parts[0] == "hooks":
		return "a git hook"
	}
	return ""
}

// sandboxed reports whether the harness runs at the sandboxed level
// (Project.Trust, read once): only a write to one of the paths above asks.
func (c *call) sandboxed() bool { return c.Trust().Level == settings.Sandboxed }
