// Package wiring knows how the harness is wired into Claude Code, and
// whether it still is: the settings files that register its hooks (or
// switch every hook off), the installed executables and the manifest of
// their digests an install leaves beside them, and the installed skill.
//
// The guard asks it which paths to refuse writes to; SessionStart, Stop and
// `harness status` ask it whether someone has unwired the harness since (its
// hooks removed from the settings, "disableAllHooks" set, an executable
// replaced). What it cannot prevent it makes visible.
package wiring

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/harness-agent/harness/internal/git"
)

// Names of the settings files Claude Code reads in a project's .claude
// directory, and of the managed (policy) settings.
const (
	ProjectSettings = "settings.json"
	LocalSettings   = "settings.local.json"
	managedFile     = "managed-settings.json"
	managedDir      = "managed-settings.d"
)

// Home is the user's home directory ("" when unknown).
func Home() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return home
}

// ConfigDirs are the user's Claude Code configuration directories:
// $CLAUDE_CONFIG_DIR when set, and ~/.claude (where `harness install`
// registers the hooks).
func ConfigDirs() []string {
	var out []string
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		out = append(out, filepath.Clean(d))
	}
	if home := Home(); home != "" {
		out = appendNew(out, filepath.Join(home, ".claude"))
	}
	return out
}

// ManagedDir is where the machine's managed settings live on this platform
// ("" where the harness does not know it).
func ManagedDir() string {
	switch runtime.GOOS {
	case "linux":
		return "/etc/claude-code"
	case "darwin":
		return "/Library/Application Support/ClaudeCode"
	}
	return ""
}

// SettingsFiles lists the settings files Claude Code reads for a session
// working in the project directories projects (the project directory, the
// work tree's top, …; duplicates and "" are skipped): the user's, each
// project's shared and local one, and the managed one. The drop-in
// directory managed-settings.d is not listed (see ManagedDropIns).
func SettingsFiles(projects ...string) []string {
	var out []string
	for _, d := range ConfigDirs() {
		out = appendNew(out, filepath.Join(d, "settings.json"))
	}
	for _, p := range projects {
		if p != "" {
			out = appendNew(out, filepath.Join(p, ".claude", ProjectSettings))
			out = appendNew(out, filepath.Join(p, ".claude", LocalSettings))
		}
	}
	if m := ManagedDir(); m != "" {
		out = append(out, filepath.Join(m, managedFile))
	}
	return out
}

// ManagedDropIns is the directory whose *.json files Claude Code merges
// into the managed settings ("" where unknown).
func ManagedDropIns() string {
	if m := ManagedDir(); m != "" {
		return filepath.Join(m, managedDir)
	}
	return ""
}

// SkillDirs lists where the harness skill is installed for the projects:
// the user's skills and each project's.
func SkillDirs(projects ...string) []string {
	var out []string
	for _, d := range ConfigDirs() {
		out = appendNew(out, filepath.Join(d, "skills", "harness"))
	}
	for _, p := range projects {
		if p != "" {
			out = appendNew(out, filepath.Join(p, ".claude", "skills", "harness"))
		}
	}
	return out
}

// DefaultBinDir is where `harness install` puts the executables unless
// told otherwise ("" when there is no home).
func DefaultBinDir() string {
	if home := Home(); home != "" {
		return filepath.Join(home, ".claude", "harness", "bin")
	}
	return ""
}

// IsInstallDir reports whether dir holds executables `harness install` put
// there: it has their manifest. One Lstat.
func IsInstallDir(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, Manifest))
	return err == nil
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// Projects returns the project directories Claude Code may read a .claude
// directory from for a session working in dirs: each one given (clean,
// symlinks resolved) and the top of the git work tree holding it, each
// once, "" skipped. resolved is a directory known to be resolved already
// (the state root, as root.Find found it), taken as it is wherever it is
// among dirs: resolving it again would lstat each of its components.
func Projects(resolved string, dirs ...string) []string {
	var out, seen []string
	for _, d := range dirs {
		if d == "" || slices.Contains(seen, d) {
			continue // (the project directory, the cwd and the state root are often one)
		}
		seen = append(seen, d)
		if d != resolved {
			if real, err := filepath.EvalSymlinks(d); err == nil {
				d = real
			}
		}
		d = filepath.Clean(d)
		out = appendNew(out, d)
		if top := git.NearestTop(d); top != "" {
			out = appendNew(out, top)
		}
	}
	return out
}
