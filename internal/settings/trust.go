package settings

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/safefile"
)

// The levels of trust the harness runs at.
const (
	// Standard: the agent's commands run as the user, unconfined; a change
	// to the harness's files is detected after the fact and put back.
	Standard = "standard"
	// Sandboxed: Claude Code's OS sandbox confines every command the agent
	// runs, with no way out, and the record is read-only inside it: a
	// rewrite of the record cannot happen at all.
	Sandboxed = "sandboxed"
)

// Trust is the level in force and, below the sandboxed level, why.
type Trust struct {
	Level string
	Why   string // "" at the sandboxed level
	// What the merged settings ask of the sandbox, for the harness's own
	// confinement of the project's commands (internal/confine): the paths
	// kept read-only (the user's and managed denyWrite), the paths made
	// writable (every file's allowWrite), and whether any network is
	// allowed (allowedDomains, allowLocalBinding, allowAllUnixSockets).
	DenyWrite  []string
	AllowWrite []string
	Network    bool
}

// TrustOf reads the level of trust from the settings files Claude Code
// merges for a session in project, run by the user whose home is home:
// sandboxed when the sandbox is on, required (failIfUnavailable), without
// an unsandboxed fallback, and its denyWrite covers records, the record
// directory. allowUnsandboxedCommands: false and the write rules count
// from the user's and managed settings only: Claude Code holds the
// fallback closed when those say so, and a project's settings are the
// project's to change.
func TrustOf(home, project, records string) Trust {
	user := readQuiet(filepath.Join(home, ".claude", "settings.json"))
	managed := readQuiet(managedSettings())
	var shared, local []byte
	if project != "" {
		shared = readQuiet(filepath.Join(project, ".claude", "settings.json"))
		local = readQuiet(filepath.Join(project, ".claude", "settings.local.json"))
	}
	// Highest precedence first: managed, the project's local, the
	// project's shared, the user's.
	byPrecedence := [][]byte{managed, local, shared, user}
	enabled := firstBool(byPrecedence, "sandbox.enabled")
	required := firstBool(byPrecedence, "sandbox.failIfUnavailable")
	trusted := []SandboxState{ReadSandbox(managed), ReadSandbox(user)}
	noFallback := false
	var deny []string
	for _, s := range trusted {
		noFallback = noFallback || s.NoFallback
		deny = append(deny, s.DenyWrite...)
	}
	t := Trust{DenyWrite: expandAll(home, deny)}
	for _, doc := range byPrecedence {
		if doc == nil {
			continue
		}
		t.AllowWrite = append(t.AllowWrite, expandAll(home, listOf(doc, allowWriteKey))...)
		net := gjson.GetBytes(doc, "sandbox.network")
		t.Network = t.Network || len(net.Get("allowedDomains").Array()) > 0 ||
			net.Get("allowLocalBinding").Type == gjson.True || net.Get("allowAllUnixSockets").Type == gjson.True
	}
	t.Level = Standard
	switch {
	case !enabled:
		t.Why = "Claude Code's sandbox is off (sandbox.enabled is not true)"
	case !noFallback:
		t.Why = "a command may run outside the sandbox (sandbox.allowUnsandboxedCommands is not false in the user's settings)"
	case !required:
		t.Why = "a session may start without the sandbox (sandbox.failIfUnavailable is not true)"
	case !covers(deny, records):
		t.Why = "the record directory " + records + " is not in sandbox.filesystem.denyWrite"
	default:
		t.Level = Sandboxed
	}
	return t
}

// expandAll makes the absolute paths of a settings list ("~/" is the
// home directory); others are dropped.
func expandAll(home string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if strings.HasPrefix(p, "~/") {
			if home == "" {
				continue
			}
			p = filepath.Join(home, p[2:])
		}
		if filepath.IsAbs(p) {
			out = append(out, p)
		}
	}
	return out
}

// firstBool is the value of key in the first document that sets it to a
// boolean, false when none does.
func firstBool(docs [][]byte, key string) bool {
	for _, doc := range docs {
		if doc == nil {
			continue
		}
		switch gjson.GetBytes(doc, key).Raw {
		case "true":
			return true
		case "false":
			return false
		}
	}
	return false
}

// covers reports whether one of paths is dir or a directory above it.
func covers(paths []string, dir string) bool {
	if dir == "" {
		return false
	}
	dir = RealPath(dir)
	for _, p := range paths {
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			continue
		}
		p = RealPath(p)
		if p == dir || strings.HasPrefix(dir, p+string(filepath.Separator)) || p == string(filepath.Separator) {
			return true
		}
	}
	return false
}

// RealPath resolves path's symlinks as far as it exists: the sandbox
// binds real paths (macOS's /tmp is /private/tmp).
func RealPath(path string) string {
	path = filepath.Clean(path)
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	if dir := filepath.Dir(path); dir != path {
		return filepath.Join(RealPath(dir), filepath.Base(path))
	}
	return path
}

// managedSettings is where an administrator's settings live.
func managedSettings() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-settings.json`
	}
	return "/etc/claude-code/managed-settings.json"
}

// readQuiet reads a settings file, nil when it is missing or unreadable.
func readQuiet(path string) []byte {
	data, err := safefile.ReadFile(path, MaxFile)
	if err != nil {
		return nil
	}
	return data
}
