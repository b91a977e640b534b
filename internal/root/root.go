// Package root finds the state root: the directory holding harness-tasks.json.
// Every hook and every harness verb agrees on it, so they all read and lock the
// same state whichever subdirectory Claude Code or the agent happens to be in.
package root

import (
	"os"
	"path/filepath"
)

// TasksFile is the name of the structured state file that marks a state root.
const TasksFile = "harness-tasks.json"

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
func Active(dir string) bool {
	if dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, ActiveMarker))
	return err == nil
}

func search(start string) string {
	dir := resolve(start)
	for i := 0; dir != "" && i < maxParents; i++ {
		if hasTasks(dir) {
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
