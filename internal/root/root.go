// Package root finds the state root: the directory holding harness-tasks.json.
// Every hook and every harness verb agrees on it, so they all read and lock the
// same state whichever subdirectory Claude Code or the agent happens to be in.
package root

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/safefile"
)

// TasksFile is the name of the structured state file that marks a state root.
const TasksFile = "harness-tasks.json"

// ProgressFile is the human-readable progress log beside the tasks file.
const ProgressFile = "harness-progress.txt"

// InitScript is the project's environment setup script, run at session start.
const InitScript = "harness-init.sh"

// ActiveMarker is the file whose presence turns the hooks on.
const ActiveMarker = ".harness-active"

// maxParents bounds the upward search so a deep or looping tree costs little.
const maxParents = 64

// Find returns the state root, looking in order at $HARNESS_STATE_ROOT (when it
// holds the tasks file), then $CLAUDE_PROJECT_DIR and its parents, then cwd
// (the hook payload's, or the process's when empty) and its parents. It
// returns "" when no state root exists.
func Find(cwd string) string {
	if dir := os.Getenv("HARNESS_STATE_ROOT"); dir != "" {
		if d := resolve(dir); d != "" && hasTasks(d) {
			return d
		}
	}
	if dir := os.Getenv("CLAUDE_PROJECT_DIR"); dir != "" {
		if d := search(dir); d != "" {
			return d
		}
	}
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if cwd == "" {
		return ""
	}
	return search(cwd)
}

// Active reports whether the hooks are switched on for the state root dir.
// The marker counts by its own presence: a symlink in its place counts even
// when it dangles, so `ln -sf /nonexistent .harness-active` cannot switch
// the hooks off.
func Active(dir string) bool {
	if dir == "" {
		return false
	}
	_, err := os.Lstat(filepath.Join(dir, ActiveMarker))
	return err == nil
}

// Enclosing returns the nearest state root above dir (its parents, not
// dir itself), "" when there is none: the job a new one in dir would be
// nested in.
func Enclosing(dir string) string {
	d := resolve(dir)
	if d == "" {
		// Not made yet: its nearest existing parent.
		d = resolve(filepath.Dir(dir))
		if d == "" {
			return ""
		}
		return search(d)
	}
	parent := filepath.Dir(d)
	if parent == d {
		return ""
	}
	return search(parent)
}

func search(start string) string { return Nearest(resolve(start), hasTasks) }

// Nearest returns the nearest of dir and its parents (maxParents at most)
// for which has is true, "" when none is or dir is "". dir is taken as
// given: the caller resolves it first where links matter.
func Nearest(dir string, has func(dir string) bool) string {
	for i := 0; dir != "" && i < maxParents; i++ {
		if has(dir) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}

// resolve makes dir absolute with symlinks resolved, or returns "" when it
// does not exist.
func resolve(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return ""
	}
	return real
}

func hasTasks(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, TasksFile))
	return err == nil && fi.Mode().IsRegular()
}

// OwnedNames are the files the harness owns in a state root besides the
// .harness-* markers and directories. Git rollbacks never revert or delete
// them, and they never make a tree "dirty". Callers must not modify it.
var OwnedNames = []string{TasksFile, TasksFile + ".bak", TasksFile + ".tmp", ProgressFile, InitScript}

// IsHarnessFile reports whether name (a path relative to the state root) is
// one of the harness's own files: the state files, their backups and
// temporaries, the progress log, harness-init.sh, and any .harness-* marker
// or directory with everything in it.
func IsHarnessFile(name string) bool {
	name = filepath.ToSlash(filepath.Clean(name))
	if first, _, nested := strings.Cut(name, "/"); nested {
		// Only harness directories (.harness-runtime/ and the like) own
		// nested paths.
		return strings.HasPrefix(first, ".harness-")
	}
	for _, n := range OwnedNames {
		if name == n {
			return true
		}
	}
	return strings.HasPrefix(name, ".harness-") || strings.HasPrefix(name, TasksFile+".corrupt-") ||
		strings.HasPrefix(name, "."+TasksFile) // renameio's temporaries
}

// PausedFile, in the state root, says a person paused the run (`harness
// pause`): the hooks let every session stop and start no work until
// `harness resume` removes it. It lives in the runtime directory, a harness
// file the agent's tools may not write.
const PausedFile = ".harness-runtime/paused"

// Paused reports whether the run in the state root dir is paused.
func Paused(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, PausedFile))
	return err == nil
}

// RuntimeDir, in the state root, holds the hooks' own small files: per-session
// bookkeeping, the pause mark, the resume card, the use of the budget. It is a
// harness file: never committed, never reverted.
const RuntimeDir = ".harness-runtime"

// OwnRuntimeDir removes what else than a directory stands in the place of
// dir's runtime directory: a symlink there would have the hooks, which run
// outside Claude Code's sandbox, write their files (some with the agent's
// words in them: a task's title, a resume card) into a directory of the
// agent's choosing, one some program reads every file of. The next write
// makes the directory anew. The hooks call it as they open a project the
// harness works in: one lstat.
func OwnRuntimeDir(dir string) {
	safefile.RemoveUnlessDir(filepath.Join(dir, RuntimeDir))
}

// SessionFile returns the file named prefix + the session's key + ".json" in
// the runtime directory of dir. The key is the session id when it is a plain
// file name (1 to 128 of [A-Za-z0-9._-], not starting with a dot), "unknown"
// for no id, and a hash of any other id, so a hostile session id cannot name
// a path outside the directory.
func SessionFile(dir, prefix, sessionID string) string {
	return SessionFileIn(filepath.Join(dir, RuntimeDir), prefix, sessionID)
}

// SessionFileIn is SessionFile in the directory base.
func SessionFileIn(base, prefix, sessionID string) string {
	key := sessionID
	switch {
	case key == "":
		key = "unknown"
	case !plainID(key):
		sum := digest.SHA256([]byte(key))
		key = hex.EncodeToString(sum[:16])
	}
	return filepath.Join(base, prefix+key+".json")
}

// plainID reports whether a session id can be a file name as it is.
func plainID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '.' {
		return false
	}
	for _, r := range id {
		ok := r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !ok {
			return false
		}
	}
	return true
}
