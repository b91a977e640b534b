package git

// This file changes a work tree: the task commit after a passing validation,
// and the rollback after a failing one. Two promises hold throughout:
//
//   - the harness's own files (root.IsHarnessFile in the state root) are never
//     staged, committed, reverted or deleted, tracked or not: the outcome the
//     harness just recorded must survive the rollback that follows it. They
//     are excluded from every command (pathspecs, clean's -e patterns) rather
//     than saved and restored, so no crash can leave them reverted.
//   - nothing is lost: before a rollback, the whole work tree (tracked and
//     untracked, not ignored) is saved as a commit under
//     refs/harness/snapshots/<task>/<attempt>, built in a temporary index so
//     the real index, HEAD and files are untouched by the saving.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
)

// WorkTimeout bounds the git calls that walk the whole work tree (add, commit
// with its hooks, checkout, clean), which can take longer than Timeout.
var WorkTimeout = 5 * time.Minute

// SnapshotPrefix is the ref namespace of rollback snapshots.
const SnapshotPrefix = "refs/harness/snapshots/"

// SnapshotRef names the snapshot of a task's attempt:
// refs/harness/snapshots/<RefName(taskID)>/<attempt>.
func SnapshotRef(taskID string, attempt int) string {
	return fmt.Sprintf("%s%s/%d", SnapshotPrefix, RefName(taskID), attempt)
}

// RefName makes a task id one valid ref name component (git
// check-ref-format): an id harness add accepts is returned as it is; any
// other byte, and a '.' where git forbids one, becomes %XX. A hand-edited id
// ("has space", "a/b", "x.lock") thus still gets its own snapshot ref, and a
// rollback is never skipped for want of one. ParseRefName reverses it.
func RefName(taskID string) string {
	var b strings.Builder
	for i := 0; i < len(taskID); i++ {
		c := taskID[i]
		plain := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
		if c == '.' {
			// Not first, not last, not before another '.', not starting ".lock" at the end.
			plain = i > 0 && i < len(taskID)-1 && taskID[i+1] != '.' && taskID[i:] != ".lock"
		}
		if plain {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	if b.Len() == 0 {
		return "%"
	}
	return b.String()
}

// ParseRefName returns the task id RefName encoded as name.
func ParseRefName(name string) string {
	if !strings.Contains(name, "%") || name == "%" {
		return strings.TrimSuffix(name, "%")
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if name[i] == '%' && i+2 < len(name) {
			if v, err := strconv.ParseUint(name[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(name[i])
	}
	return b.String()
}

// runIn runs git in dir with extra environment and a time limit.
func runIn(dir string, env []string, timeout time.Duration, stdin []byte, args ...string) (string, error) {
	return Cmd{Dir: dir, Env: env, Timeout: timeout, Stdin: stdin}.Run(args...)
}

// protected describes where the state root's files sit in a work tree.
type protected struct {
	top string
	rel string // the state root relative to top, "." at the top; "" when outside
}

func protect(top, stateRoot string) protected {
	if stateRoot == "" {
		return protected{top: top, rel: "."}
	}
	rel, err := filepath.Rel(top, stateRoot)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return protected{top: top}
	}
	return protected{top: top, rel: filepath.ToSlash(rel)}
}

// harnessLiterals and harnessGlobs together match exactly the names
// root.IsHarnessFile accepts (a test holds them to it).
var (
	harnessLiterals = root.OwnedNames
	harnessGlobs    = []string{".harness-*", ".harness-*/**", root.TasksFile + ".corrupt-*"}
)

func (p protected) join(name string) string {
	if p.rel == "." {
		return name
	}
	return p.rel + "/" + name
}

// excludes are pathspecs leaving the harness files out of a checkout.
func (p protected) excludes() []string {
	if p.rel == "" {
		return nil
	}
	var specs []string
	for _, n := range harnessLiterals {
		specs = append(specs, ":(exclude,literal)"+p.join(n))
	}
	dir := ""
	if p.rel != "." {
		dir = escapeGlob(p.rel) + "/"
	}
	for _, g := range harnessGlobs {
		specs = append(specs, ":(exclude,glob)"+dir+g)
	}
	return specs
}

// cleanExcludes are `git clean -e` patterns (gitignore syntax, anchored at
// the top). Unlike exclude pathspecs they also keep clean from removing an
// untracked directory that holds harness files.
func (p protected) cleanExcludes() []string {
	if p.rel == "" {
		return nil
	}
	dir := "/"
	if p.rel != "." {
		dir = "/" + escapeGlob(p.rel) + "/"
	}
	var args []string
	for _, n := range harnessLiterals {
		args = append(args, "-e", dir+escapeGlob(n))
	}
	for _, g := range harnessGlobs {
		args = append(args, "-e", dir+g)
	}
	return args
}

// owns reports whether path (relative to top, slash-separated) is a harness
// file: one root.IsHarnessFile accepts relative to the state root, so
// everything under .harness-runtime/ and the like counts, not just the files
// directly in the state root.
func (p protected) owns(path string) bool {
	switch {
	case p.rel == "":
		return false
	case p.rel == ".":
		return root.IsHarnessFile(path)
	}
	rest, ok := strings.CutPrefix(path, p.rel+"/")
	return ok && root.IsHarnessFile(rest)
}

// escapeGlob escapes the characters glob pathspecs and gitignore patterns
// treat specially.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\*?[]!# `, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// identity returns environment that gives commits an author when git has
// none configured: the harness must be able to checkpoint in a fresh
// container. A configured identity always wins.
func identity(top string) []string {
	if hasIdentity(top) {
		return nil
	}
	return []string{"GIT_AUTHOR_NAME=harness", "GIT_AUTHOR_EMAIL=harness@localhost",
		"GIT_COMMITTER_NAME=harness", "GIT_COMMITTER_EMAIL=harness@localhost"}
}

// hasIdentity reports whether git run in dir has an author and a committer
// of its own (configured, or guessed from the system as git does).
func hasIdentity(dir string) bool {
	_, err := Run(dir, "var", "GIT_COMMITTER_IDENT")
	if err == nil {
		_, err = Run(dir, "var", "GIT_AUTHOR_IDENT")
	}
	return err == nil
}

// BaselineAdvice is the command a person runs to commit the first commit
// of the repository holding dir, the baseline the harness starts from:
// with git's identity set first where git has none (the harness's own
// commits fall back on one of their own; a person's must not).
func BaselineAdvice(dir string) string {
	if hasIdentity(dir) {
		return "git add -A && git commit -m baseline"
	}
	return `git config user.name "Your Name" && git config user.email you@example.com && git add -A && git commit -m baseline (git has no identity here)`
}

// Snapshot saves the work tree holding dir, tracked and untracked files alike
// (ignored ones and the harness files of stateRoot excluded), as a commit
// whose parent is HEAD, and points ref at it. When ref exists already the
// first free "<ref>-N" is used. The real index, HEAD and files are not
// touched. It returns the ref used and the commit.
func Snapshot(dir, stateRoot, ref, message string) (usedRef, commit string, err error) {
	top, err := Top(dir)
	if err != nil {
		return "", "", err
	}
	tree, err := workTree(top, stateRoot, "snapshot")
	if err != nil {
		return "", "", err
	}
	args := []string{"commit-tree", tree, "-m", message}
	if head := Head(top); head != "" {
		args = append(args, "-p", head)
	}
	commit, err = runIn(top, identity(top), Timeout, nil, args...)
	if err != nil {
		return "", "", err
	}
	for n := 1; n <= 100; n++ {
		try := ref
		if n > 1 {
			try = fmt.Sprintf("%s-%d", ref, n)
		}
		// The empty old value makes update-ref fail if the ref exists:
		// two failures of one attempt never overwrite each other. Only
		// that failure moves on to the next name; any other is reported.
		_, err := Run(top, "update-ref", try, commit, "")
		if err == nil {
			return try, commit, nil
		}
		if _, verr := Run(top, "rev-parse", "--verify", "-q", try); verr != nil {
			return "", "", fmt.Errorf("snapshot: %v", err)
		}
	}
	return "", "", fmt.Errorf("snapshot: no free ref like %s (100 taken)", ref)
}

// Rollback makes the work tree holding dir what it was at commit base: HEAD
// moves to base (dropping later commits from the branch), tracked files are
// restored and untracked ones removed (`git reset --hard base` plus `git
// clean -fd`), except the harness files of stateRoot, which keep their
// current bytes. Ignored files stay, as with `git clean -fd`. Take a
// Snapshot first: Rollback itself keeps nothing.
func Rollback(dir, stateRoot, base string) error {
	top, err := Top(dir)
	if err != nil {
		return err
	}
	if !CommitExists(top, base) {
		return fmt.Errorf("rollback: %q is not a commit", base)
	}
	p := protect(top, stateRoot)
	// reset --mixed moves HEAD and the index but no file; the checkout then
	// restores every tracked file but the harness's.
	if _, err := runIn(top, nil, WorkTimeout, nil, "reset", "-q", base); err != nil {
		return err
	}
	if _, err := runIn(top, nil, WorkTimeout, nil, append([]string{"checkout", "-q", "-f", "--", "."}, p.excludes()...)...); err != nil {
		if files, lerr := Run(top, "ls-files"); lerr != nil || files != "" {
			return err
		} // an empty base tree has nothing to check out
	}
	return clean(top, p.cleanExcludes(), WorkTimeout)
}

// CommitAll stages every change in the work tree holding dir (untracked files
// included, ignored ones and the harness files of stateRoot excluded) and
// commits it with message. When there is nothing to commit it makes no
// commit and returns HEAD with committed false.
func CommitAll(dir, stateRoot, message string) (hash string, committed bool, err error) {
	top, err := Top(dir)
	if err != nil {
		return "", false, err
	}
	p := protect(top, stateRoot)
	if err := addAll(top, nil, WorkTimeout); err != nil {
		return "", false, err
	}
	// Unstage the harness files, whoever staged them (this add, or the
	// agent's own `git add -A`). Exclude pathspecs on the add would not do:
	// git add fails when one names an ignored file.
	staged, err := Run(top, "diff", "--cached", "--name-only", "-z")
	if err != nil {
		return "", false, err
	}
	var unstage []string
	for _, f := range strings.Split(staged, "\x00") {
		if f != "" && p.owns(f) {
			unstage = append(unstage, ":(literal)"+f)
		}
	}
	if len(unstage) > 0 {
		if _, err := Run(top, append([]string{"reset", "-q", "--"}, unstage...)...); err != nil {
			return "", false, err
		}
	}
	if _, err := Run(top, "diff", "--cached", "--quiet"); err == nil {
		return Head(top), false, nil
	}
	if _, err := runIn(top, identity(top), WorkTimeout, nil, "commit", "-q", "-m", message); err != nil {
		return "", false, err
	}
	return Head(top), true, nil
}

// Snap is one rollback snapshot.
type Snap struct {
	Ref     string // refs/harness/snapshots/<task>/<attempt>
	TaskID  string
	Attempt string // "2", or "2-2" for a second snapshot of attempt 2
	Commit  string
	Date    time.Time
	Subject string
}

// Snapshots lists the snapshots of taskID (all tasks when empty) in the
// repository holding dir, by task and attempt.
func Snapshots(dir, taskID string) ([]Snap, error) {
	pattern := strings.TrimSuffix(SnapshotPrefix, "/")
	if taskID != "" {
		pattern = SnapshotPrefix + RefName(taskID)
	}
	out, err := Run(dir, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(creatordate:iso-strict)%00%(subject)", pattern)
	if err != nil {
		return nil, err
	}
	var snaps []Snap
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(line, "\x00", 4)
		if len(f) < 4 {
			continue
		}
		rest := strings.TrimPrefix(f[0], SnapshotPrefix)
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			continue
		}
		s := Snap{Ref: f[0], TaskID: ParseRefName(rest[:i]), Attempt: rest[i+1:], Commit: f[1], Subject: f[3]}
		s.Date, _ = time.Parse(time.RFC3339, f[2])
		snaps = append(snaps, s)
	}
	sort.SliceStable(snaps, func(a, b int) bool {
		x, y := snaps[a], snaps[b]
		if x.TaskID != y.TaskID {
			return x.TaskID < y.TaskID
		}
		return attemptKey(x.Attempt) < attemptKey(y.Attempt)
	})
	return snaps, nil
}

// attemptKey orders "2" < "2-2" < "10".
func attemptKey(a string) string {
	n, suffix, _ := strings.Cut(a, "-")
	v, _ := strconv.Atoi(n)
	s, _ := strconv.Atoi(suffix)
	return fmt.Sprintf("%09d.%09d", v, s)
}

// RestoreCommand is the command that brings a snapshot's files back into the
// work tree top: every file the snapshot holds, tracked or untracked when it
// was taken, is written and staged; the harness files are not in snapshots,
// so the state is never reverted. Files the failed attempt had deleted are
// not deleted again.
func RestoreCommand(top, ref string) string {
	return fmt.Sprintf("git -C %s checkout %s -- .", failure.ShellArg(top), failure.ShellArg(ref))
}

// workTree writes the work tree top as a git tree object, tracked and
// untracked files alike (ignored ones and the harness files of stateRoot
// excluded), through a temporary index: the real index, HEAD and files are
// not touched. what names the caller in errors.
func workTree(top, stateRoot, what string) (string, error) {
	gitDir, err := Run(top, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(gitDir, "harness-snapshot-*.index")
	if err != nil {
		return "", fmt.Errorf("%s: %v", what, err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	// Start from a copy of the real index so unchanged files are not hashed
	// again: its stat data says they match.
	if idx, err := Run(top, "rev-parse", "--git-path", "index"); err == nil {
		if !filepath.IsAbs(idx) {
			idx = filepath.Join(top, idx)
		}
		if data, err := safefile.ReadFile(idx, 1<<30); err == nil {
			if err := os.WriteFile(tmp.Name(), data, 0o644); err != nil {
				return "", fmt.Errorf("%s: %v", what, err)
			}
		} else {
			os.Remove(tmp.Name()) // no index yet: git starts an empty one
		}
	}
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	p := protect(top, stateRoot)
	// No exclude pathspecs here: git add fails when one names an ignored
	// file (harness init lists the harness files in .git/info/exclude).
	if err := addAll(top, env, WorkTimeout); err != nil {
		return "", err
	}
	// Drop the harness files (tracked ones came with the copied index), so
	// restoring a snapshot can never revert the state.
	listed, err := runIn(top, env, Timeout, nil, "ls-files", "-z")
	if err != nil {
		return "", err
	}
	var drop bytes.Buffer
	for _, f := range strings.Split(listed, "\x00") {
		if f != "" && p.owns(f) {
			drop.WriteString(f + "\x00")
		}
	}
	if drop.Len() > 0 {
		if _, err := runIn(top, env, Timeout, drop.Bytes(), "update-index", "--force-remove", "-z", "--stdin"); err != nil {
			return "", err
		}
	}
	return runIn(top, env, Timeout, nil, "write-tree")
}

// DiffSince is the change of the work tree holding dir since commit base,
// as `git diff` shows it, untracked files included (as added) and ignored
// ones and the harness files of stateRoot left out: what an attempt did.
func DiffSince(dir, base, stateRoot string) (string, error) {
	top, err := Top(dir)
	if err != nil {
		return "", err
	}
	tree, err := workTree(top, stateRoot, "diff")
	if err != nil {
		return "", err
	}
	return runIn(top, nil, WorkTimeout, nil, "diff", "--no-color", "--no-ext-diff", base, tree, "--")
}
