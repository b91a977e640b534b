package git

// The merge queue's git steps: a scratch work tree, a task's commits rebased
// onto the integration branch's tip there, and the fast-forward of the
// branch. None of them touches a worker's tree.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RefHead is the commit ref names in the repository of dir, "" when it
// names none.
func RefHead(dir, ref string) string {
	out, err := Run(dir, "rev-parse", "-q", "--verify", ref+"^{commit}")
	if err != nil {
		return ""
	}
	return out
}

// CurrentBranch is the branch checked out in dir ("main"), "" when HEAD is
// detached or dir is not in a repository.
func CurrentBranch(dir string) string {
	out, err := Run(dir, "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return out
}

// ScratchTree makes path a detached work tree of top's repository at
// commit, clean (untracked files removed, ignored ones kept): made with `git
// worktree add` the first time, reused after.
func ScratchTree(top, path, commit string) error {
	if fi, err := os.Stat(filepath.Join(path, ".git")); err == nil && !fi.IsDir() {
		if _, err := runIn(path, nil, WorkTimeout, nil, "checkout", "-q", "-f", "--detach", commit); err == nil {
			_, err = runIn(path, nil, WorkTimeout, nil, "clean", "-q", "-fd")
			return err
		}
		// Not a usable work tree any more (its repository forgot it):
		// make it again.
		os.RemoveAll(path)
	}
	Run(top, "worktree", "prune")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	_, err := runIn(top, nil, WorkTimeout, nil, "worktree", "add", "-q", "--detach", path, commit)
	return err
}

// Rebase replays the commits base..commit onto onto in the scratch tree
// (left detached at the result) and returns the new head. A conflict is
// reported by the files it is in (the rebase is aborted, the tree left at
// onto); conflicts is nil on success.
func Rebase(scratch, base, commit, onto string) (merged string, conflicts []string, err error) {
	if _, err := runIn(scratch, nil, WorkTimeout, nil, "checkout", "-q", "-f", "--detach", commit); err != nil {
		return "", nil, err
	}
	env := append(identity(scratch), "GIT_EDITOR=true")
	if _, rerr := runIn(scratch, env, WorkTimeout, nil, "rebase", "-q", "--onto", onto, base); rerr != nil {
		out, _ := Run(scratch, "diff", "--name-only", "--diff-filter=U")
		for _, f := range strings.Split(out, "\n") {
			if f != "" {
				conflicts = append(conflicts, f)
			}
		}
		runIn(scratch, nil, WorkTimeout, nil, "rebase", "--abort")
		if len(conflicts) == 0 {
			return "", nil, rerr
		}
		runIn(scratch, nil, WorkTimeout, nil, "checkout", "-q", "-f", "--detach", onto)
		return "", conflicts, nil
	}
	return Head(scratch), nil, nil
}

// FastForward moves branch of top's repository from from to to, which must
// descend from it: with `git merge --ff-only` when top has the branch
// checked out (so its files follow), else with a compare-and-swap
// `git update-ref`. It refuses when the branch is no longer at from.
func FastForward(top, branch, from, to string) error {
	ref := "refs/heads/" + branch
	if now := RefHead(top, ref); now != from {
		return fmt.Errorf("%s moved (now %s, expected %s)", branch, Short(now), Short(from))
	}
	if CurrentBranch(top) == branch {
		_, err := runIn(top, identity(top), WorkTimeout, nil, "merge", "-q", "--ff-only", to)
		return err
	}
	_, err := Run(top, "update-ref", ref, to, from)
	return err
}

// SetRef points ref at commit; an empty commit deletes it.
func SetRef(dir, ref, commit string) error {
	if commit == "" {
		_, err := Run(dir, "update-ref", "-d", ref)
		return err
	}
	_, err := Run(dir, "update-ref", ref, commit)
	return err
}

// IsAncestor reports whether commit a is an ancestor of b (or b itself) in
// the repository of dir; false when git cannot tell.
func IsAncestor(dir, a, b string) bool {
	_, err := Run(dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}
