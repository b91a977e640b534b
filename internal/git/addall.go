package git

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// addAll stages every change in the work tree top (`git add -A`). Inside
// Claude Code's sandbox the work tree holds masks: /dev/null bound over
// .bashrc, .gitconfig, .mcp.json and the like, which git lists as files
// and then refuses to add ("can only add regular files, symbolic links or
// git-directories"). When an add fails so, it is made again without the
// untracked paths that are not regular files, symbolic links or
// directories: they are not the work.
func addAll(top string, env []string, timeout time.Duration) error {
	_, err := runIn(top, env, timeout, nil, "add", "-A")
	if err == nil || !strings.Contains(err.Error(), "can only add regular files") {
		return err
	}
	untracked, lerr := runIn(top, env, timeout, nil, "ls-files", "-o", "--exclude-standard", "-z")
	if lerr != nil {
		return err
	}
	args := []string{"add", "-A", "--", "."}
	for _, f := range strings.Split(untracked, "\x00") {
		if f == "" {
			continue
		}
		fi, serr := os.Lstat(filepath.Join(top, f))
		if serr == nil && (fi.Mode().IsRegular() || fi.Mode()&os.ModeSymlink != 0 || fi.IsDir()) {
			continue
		}
		args = append(args, ":(exclude,literal)"+f)
	}
	if len(args) == 4 {
		return err
	}
	_, err = runIn(top, env, timeout, nil, args...)
	return err
}
