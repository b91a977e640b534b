// Package git answers the few questions the harness asks of a work tree (its
// HEAD, whether it is dirty, which commits name a task) by running the git
// command. The harness's own files never count as changes.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
)

// Timeout bounds every git call so a wedged repository cannot hang a hook.
var Timeout = 30 * time.Second

// PipeDelay bounds how long a git call waits for its output's end once git
// exited (or was killed): a process git started and left running (a
// core.fsmonitor or other hook of the repository's configuration, which
// the agent can write, putting `sleep 1000 &` in the background) holds
// git's stdout and stderr open after git is gone, and reading them to
// their end would wait for that process.
var PipeDelay = 2 * time.Second

// Run runs git in dir and returns its trimmed stdout; stderr goes into the error.
func Run(dir string, args ...string) (string, error) { return Cmd{Dir: dir}.Run(args...) }

// Cmd is how the harness runs git, the one runner: in Dir (git -C), with
// Env added to the process's environment, bounded by Timeout (default
// Timeout), Stdin fed when set.
type Cmd struct {
	Dir     string
	Env     []string
	Timeout time.Duration
	Stdin   []byte
}

// Run runs git with args and returns its stdout without the trailing
// newline; a failure's error names the command and carries git's stderr.
func (c Cmd) Run(args ...string) (string, error) {
	out, err := c.Output(args...)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(out), "\n"), nil
}

// Output is Run keeping stdout's bytes as they are (a blob's), and giving
// them also when git fails (what --porcelain reports of a refused push).
func (c Cmd) Output(args ...string) ([]byte, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = Timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// The repository's file system monitor is a program its configuration
	// names (the agent's to write), which git waits for: the harness asks
	// git without it.
	full := append([]string{"-c", "core.fsmonitor=false"}, args...)
	if c.Dir != "" {
		full = append([]string{"-C", c.Dir}, full...)
	}
	cmd := exec.CommandContext(ctx, "git", full...)
	if c.Env != nil {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = PipeDelay
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState.Success() {
		err = nil // git succeeded; only a process it left behind held the pipes
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.Bytes(), fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return out.Bytes(), nil
}

// Available reports whether the git command exists. A git found is taken
// to stay for as long as PATH is the same (a session start asks twice, and
// each look stats every directory of PATH); a git missing is looked for
// again, in case it was installed since.
func Available() bool {
	path := os.Getenv("PATH")
	if found, _ := foundOn.Load().(string); found == path && path != "" {
		return true
	}
	if _, err := exec.LookPath("git"); err != nil {
		return false
	}
	foundOn.Store(path)
	return true
}

// foundOn is the PATH on which Available last found git.
var foundOn atomic.Value

// Toplevel returns the top of the work tree holding dir, or an ENV_SETUP error
// when dir is not in a git repository.
func Toplevel(dir string) (string, error) {
	if !Available() {
		return "", failure.New(failure.EnvSetup, "git is not installed").WithHint("install git: the harness uses it as its checkpoint store")
	}
	top, err := Top(dir)
	if err != nil {
		return "", failure.New(failure.EnvSetup, "%s is not inside a git repository", dir).
			WithHint("run `harness init` in the project (it runs git init and keeps the harness files out of git), then `git add -A && git commit -m baseline`")
	}
	return top, nil
}

// Top returns the top of the work tree holding dir, as `git rev-parse
// --show-toplevel` prints it, without starting git where it can: the
// nearest directory, dir or one of its parents (symlinks resolved), holding
// a .git entry (the directory, or the file of a linked worktree or a
// submodule). A git process costs milliseconds and the hooks ask this on
// every session start. Git's own environment (GIT_DIR, GIT_WORK_TREE,
// GIT_CEILING_DIRECTORIES) changes the answer, so with it set, or when no
// .git is found, git itself is asked.
func Top(dir string) (string, error) {
	if os.Getenv("GIT_DIR") == "" && os.Getenv("GIT_WORK_TREE") == "" && os.Getenv("GIT_CEILING_DIRECTORIES") == "" {
		if abs, err := filepath.Abs(dir); err == nil {
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				if entry, _ := gitEntry(real); entry != "" {
					return filepath.Dir(entry), nil
				}
				// No .git anywhere above, and nothing in the environment
				// points git elsewhere: git would say the same, at the
				// price of a process.
				return "", ErrNoRepository
			}
		}
	}
	return Run(dir, "rev-parse", "--show-toplevel")
}

// NearestTop returns the nearest of dir and its parents (64 at most) that
// holds a .git entry, "" when none does: Top's answer for a path already
// resolved, without resolving it again and without git's environment, for
// the hooks that ask it of several paths on every call.
func NearestTop(dir string) string {
	return root.Nearest(dir, func(d string) bool {
		_, err := os.Lstat(filepath.Join(d, ".git"))
		return err == nil
	})
}

// gitEntry returns the .git entry git would stop at for dir (an absolute
// path): dir's or its nearest parent's, "" when there is none. file tells
// a "gitdir: …" file from a directory.
func gitEntry(dir string) (path string, file bool) {
	for cur := dir; ; cur = filepath.Dir(cur) {
		p := filepath.Join(cur, ".git")
		if ok, file := isGitEntry(p); ok {
			return p, file
		}
		if filepath.Dir(cur) == cur {
			return "", false
		}
	}
}

// ErrNoRepository is Top's answer for a directory that no .git entry
// above it makes part of a repository.
var ErrNoRepository = errors.New("not a git repository (or any of the parent directories)")

// isGitEntry reports whether path is a .git entry git would stop at: a
// directory holding HEAD, or a "gitdir: …" file (linked worktree,
// submodule; file is then true). A stray empty .git directory is passed
// over, as git does.
func isGitEntry(path string) (ok, file bool) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return false, false
	case fi.IsDir():
		_, err := os.Lstat(filepath.Join(path, "HEAD"))
		return err == nil, false
	case fi.Mode().IsRegular():
		head, _, err := safefile.ReadPart(path, func(int64) (int64, int64) { return 0, 8 })
		return err == nil && string(head) == "gitdir: ", true
	}
	return false, false
}

// Head returns the full hash of HEAD, or "" in a repository without commits.
func Head(dir string) string { return RefHead(dir, "HEAD") }

// Short abbreviates a commit hash for log lines.
func Short(hash string) string {
	if len(hash) > 7 {
		return hash[:7]
	}
	return hash
}

// CommitExists reports whether hash names a commit (`git cat-file -t`).
func CommitExists(dir, hash string) bool {
	if hash == "" {
		return false
	}
	t, err := Run(dir, "cat-file", "-t", hash)
	return err == nil && t == "commit"
}

// Changes lists the paths (relative to the work tree top) that differ from
// HEAD, untracked ones included and ignored ones not, leaving out the
// harness's own files in the state root stateRoot. It reads and never
// writes: git status would otherwise refresh the index under its lock
// (index.lock), and a person's `git commit` at that instant would fail on
// the lock the harness held.
func Changes(dir, stateRoot string) ([]string, error) {
	changes, _, err := status(dir, stateRoot, false)
	return changes, err
}

// ChangesIgnored is Changes with the ignored paths git matched beside it,
// as `git status --ignored=matching` names them: a directory an ignore
// pattern matches as one path with a trailing slash, its contents not
// listed. The harness's own files are in neither list.
func ChangesIgnored(dir, stateRoot string) (changes, ignored []string, err error) {
	return status(dir, stateRoot, true)
}

func status(dir, stateRoot string, withIgnored bool) (changes, ignored []string, err error) {
	args := []string{"--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all"}
	if withIgnored {
		args = append(args, "--ignored=matching")
	}
	out, err := Run(dir, args...)
	if err != nil {
		return nil, nil, err
	}
	top, _ := Top(dir)
	entries := strings.Split(out, "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		path := e[3:]
		if e[0] == 'R' || e[0] == 'C' {
			i++ // the rename's source follows
		}
		if OwnedByHarness(top, strings.TrimSuffix(path, "/"), stateRoot) {
			continue
		}
		if e[:2] == "!!" {
			ignored = append(ignored, path)
			continue
		}
		changes = append(changes, path)
	}
	return changes, ignored, nil
}

// OwnedByHarness reports whether path (relative to the work tree top) is a
// harness file of the state root stateRoot: the harness's changes are never
// the work's.
func OwnedByHarness(top, path, stateRoot string) bool {
	if top == "" || stateRoot == "" {
		return root.IsHarnessFile(path)
	}
	rel, err := filepath.Rel(stateRoot, filepath.Join(top, path))
	return err == nil && root.IsHarnessFile(rel)
}

// Commit is one commit: hash and subject.
type Commit struct {
	Hash, Subject string
}

// CommitsNaming returns the commits in base..HEAD whose message names taskID
// as a whole word, newest first.
func CommitsNaming(dir, base, taskID string) ([]Commit, error) {
	if base == "" || taskID == "" {
		return nil, nil
	}
	out, err := Run(dir, "log", "--format=%H%x00%s%x00%b%x1e", base+"..HEAD")
	if err != nil {
		return nil, err
	}
	word := regexp.MustCompile(`(^|[^A-Za-z0-9_-])` + regexp.QuoteMeta(taskID) + `($|[^A-Za-z0-9_-])`)
	var commits []Commit
	for _, rec := range strings.Split(out, "\x1e") {
		parts := strings.SplitN(strings.TrimLeft(rec, "\n"), "\x00", 3)
		if len(parts) < 2 {
			continue
		}
		msg := parts[1]
		if len(parts) == 3 {
			msg += "\n" + parts[2]
		}
		if word.MatchString(msg) {
			commits = append(commits, Commit{Hash: parts[0], Subject: parts[1]})
		}
	}
	return commits, nil
}

// ChangedSince lists the paths (relative to the work tree top) that an
// attempt changed since base: modified, added, deleted and renamed files
// (both names of a rename) in the work tree against base, and untracked
// files not ignored, leaving out the harness's own files in the state root
// stateRoot.
func ChangedSince(dir, base, stateRoot string) ([]string, error) {
	diff, err := Run(dir, "diff", "--name-only", "--no-renames", "-z", base, "--")
	if err != nil {
		return nil, err
	}
	untracked, err := Run(dir, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	top, _ := Top(dir)
	seen := map[string]bool{}
	var changed []string
	for _, path := range strings.Split(diff+"\x00"+untracked, "\x00") {
		if path == "" || seen[path] || OwnedByHarness(top, path, stateRoot) {
			continue
		}
		seen[path] = true
		changed = append(changed, path)
	}
	return changed, nil
}

// HeadMark returns a string that changes whenever HEAD moves (a commit, a
// reset, a checkout) in the work tree holding dir, read from the files
// under .git without starting git: the Stop hook asks it at every turn end.
// It is "" outside a repository. Not a hash to show: two marks are only
// compared.
func HeadMark(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	gitDir, common := dirs(abs)
	if gitDir == "" {
		return ""
	}
	head, err := safefile.ReadFile(filepath.Join(gitDir, "HEAD"), safefile.Small)
	if err != nil {
		return ""
	}
	mark := strings.TrimSpace(string(head))
	ref, ok := strings.CutPrefix(mark, "ref: ")
	if !ok {
		return mark // detached: HEAD holds the hash
	}
	path, _ := refFile(gitDir, common, ref)
	if data, err := safefile.ReadFile(path, safefile.Small); err == nil {
		return mark + " " + strings.TrimSpace(string(data))
	}
	// A packed ref (or a branch with no commit yet): the packed-refs
	// file's identity stands for it.
	if fi, err := os.Stat(filepath.Join(common, "packed-refs")); err == nil {
		return fmt.Sprintf("%s packed %d %d", mark, fi.Size(), fi.ModTime().UnixNano())
	}
	return mark
}
