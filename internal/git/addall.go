package git

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Inside Claude Code's sandbox the work tree holds masks: /dev/null bound
// over .bashrc, .gitconfig, .mcp.json and the like. git lists them as
// untracked files, then refuses to add them ("can only add regular files,
// symbolic links or git-directories") and cannot remove them ("Device or
// resource busy"). They are not the work: a commit, a snapshot and a
// rollback leave them out. Each first runs as usual, and only when git
// fails so is it run again without them, so outside the sandbox nothing
// costs more.

// addAll stages every change in the work tree top (`git add -A`), masks
// aside.
func addAll(top string, env []string, timeout time.Duration) error {
	_, err := runIn(top, env, timeout, nil, "add", "-A")
	if err == nil || !strings.Contains(err.Error(), "can only add regular files") {
		return err
	}
	args := []string{"add", "-A", "--", "."}
	for _, m := range masks(top, env, timeout) {
		args = append(args, ":(exclude,literal)"+m)
	}
	if len(args) == 4 {
		return err
	}
	_, err = runIn(top, env, timeout, nil, args...)
	return err
}

// clean removes the untracked files of the work tree top but the harness's
// (excludes), masks aside.
func clean(top string, excludes []string, timeout time.Duration) error {
	args := append([]string{"clean", "-f", "-d", "-q"}, excludes...)
	_, err := runIn(top, nil, timeout, nil, args...)
	if err == nil || !strings.Contains(err.Error(), "Device or resource busy") {
		return err
	}
	ms := masks(top, nil, timeout)
	if len(ms) == 0 {
		return err
	}
	for _, m := range ms {
		args = append(args, "-e", "/"+escapeGlob(m))
	}
	_, err = runIn(top, nil, timeout, nil, args...)
	return err
}

// masks lists the untracked paths of the work tree top that are not
// regular files, symbolic links or directories.
func masks(top string, env []string, timeout time.Duration) []string {
	untracked, err := runIn(top, env, timeout, nil, "ls-files", "-o", "--exclude-standard", "-z")
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range strings.Split(untracked, "\x00") {
		if f == "" {
			continue
		}
		fi, err := os.Lstat(filepath.Join(top, f))
		if err == nil && (fi.Mode().IsRegular() || fi.Mode()&os.ModeSymlink != 0 || fi.IsDir()) {
			continue
		}
		out = append(out, f)
	}
	return out
}
