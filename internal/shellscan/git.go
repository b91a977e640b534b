package shellscan

import "strings"

// gitCmd is a git command line split into its parts.
type gitCmd struct {
	chdirs []field // -C DIR, in order
	sub    string
	args   []field
}

// parseGit skips git's global options, which come before the subcommand
// and are where "git -C elsewhere reset --hard" hides.
func parseGit(args []field) gitCmd {
	var g gitCmd
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "-C":
			if i+1 < len(args) {
				g.chdirs = append(g.chdirs, args[i+1])
				i++
			}
		case t == "-c" || t == "--git-dir" || t == "--work-tree" || t == "--namespace" ||
			t == "--super-prefix" || t == "--config-env":
			i++
		case strings.HasPrefix(t, "-C") && len(t) > 2:
			g.chdirs = append(g.chdirs, sub(args[i], 2))
		case strings.HasPrefix(t, "-"):
			// --no-pager, -p, --bare, --git-dir=…, -c… and the like.
		default:
			g.sub = t
			g.args = args[i+1:]
			return g
		}
	}
	return g
}

// splitDashDash splits arguments at the first "--", which separates
// revisions from pathspecs.
func splitDashDash(args []field) (before, after []field, found bool) {
	for i, f := range args {
		if f.text == "--" {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}

// pathspec turns a git pathspec into a field; git expands globs itself,
// across directories, and ":…" magic can point anywhere in the worktree.
func pathspec(f field) field {
	if strings.HasPrefix(f.text, ":") {
		return anyField(f.text)
	}
	if strings.ContainsAny(f.text, "*?[") {
		p := f.pat
		for _, g := range []string{"*", "?"} {
			p = strings.ReplaceAll(p, g, string(wildGlob))
		}
		return field{text: f.text, pat: p, dyn: true}
	}
	return f
}

func hGit(a *analyzer, c *ctx, args []field) res {
	g := parseGit(args)
	cc := c
	for _, d := range g.chdirs {
		cc = cc.chdir(d)
	}
	st, op := cc.st, c.op
	// worktree stands for the whole worktree, whose root is not known here.
	worktree := func(kind WriteKind) {
		for _, d := range st.dirs {
			a.write(st, field{text: d.text, pat: string(wildAny), dyn: true}, kind, op, true)
		}
	}
	specs := func(fs []field, kind WriteKind, tree bool) {
		for _, f := range fs {
			a.write(st, pathspec(f), kind, op, tree)
		}
	}
	switch g.sub {
	case "checkout":
		before, after, dd := splitDashDash(g.args)
		p := parseArgs(before, optSpec{arg: "bBU", long: []string{"orphan", "conflict", "pathspec-from-file", "inter-hunk-context"}})
		if p.has("f", "force") {
			worktree(GitRestore)
		}
		if dd {
			specs(after, GitRestore, true)
		}
		if !dd && !p.has("b", "B", "orphan") {
			// Without "--" a word may be a branch or a path; assume path.
			specs(p.pos, GitRestore, true)
		}
	case "restore":
		p := parseArgs(g.args, optSpec{arg: "s", long: []string{"source", "pathspec-from-file", "conflict", "inter-hunk-context"}})
		if p.has("S", "staged") && !p.has("W", "worktree") {
			break // only the index changes
		}
		specs(p.pos, GitRestore, true)
	case "reset":
		if p := parseArgs(g.args, optSpec{}); p.has("hard", "merge", "keep") {
			worktree(GitRestore)
		}
	case "stash":
		subc := ""
		if len(g.args) > 0 && !strings.HasPrefix(g.args[0].text, "-") {
			subc = g.args[0].text
		}
		switch subc {
		case "list", "show", "drop", "clear", "create", "store":
		default:
			worktree(GitRestore)
		}
	case "clean":
		p := parseArgs(g.args, optSpec{arg: "e", long: []string{"exclude"}})
		if p.has("n", "dry-run") {
			break
		}
		if len(p.pos) == 0 {
			p.pos = []field{lit(".")}
		}
		specs(p.pos, Remove, true)
	case "rm":
		p := parseArgs(g.args, optSpec{long: []string{"pathspec-from-file"}})
		if p.has("cached", "n", "dry-run") {
			break
		}
		specs(p.pos, Remove, p.has("r"))
	case "mv":
		p := parseArgs(g.args, optSpec{})
		a.copyLike(cc, p, MoveTarget, true)
	case "switch":
		if p := parseArgs(g.args, optSpec{arg: "cC", long: []string{"create", "force-create", "orphan", "conflict"}}); p.has("f", "force", "discard-changes") {
			worktree(GitRestore)
		}
	}
	return c.same()
}

// IsDestructiveGit reports whether p is a git command that throws away
// uncommitted work, and why: git reset --hard/--merge/--keep, git clean
// (any flags), git checkout with pathspecs or -f (git checkout . and
// git checkout -- FILE), git restore of the worktree (git restore --staged
// alone only unstages and is allowed), git switch --discard-changes/-f, and
// git stash except list and show. Global options such as -C DIR are skipped.
func IsDestructiveGit(p Program) (bool, string) {
	if p.Dynamic || p.Base() != "git" {
		return false, ""
	}
	args := make([]field, len(p.Args))
	for i, s := range p.Args {
		args[i] = lit(s)
	}
	g := parseGit(args)
	switch g.sub {
	case "reset":
		if q := parseArgs(g.args, optSpec{}); q.has("hard", "merge", "keep") {
			return true, "git reset --hard discards uncommitted changes"
		}
	case "clean":
		return true, "git clean deletes untracked files"
	case "checkout":
		before, after, dd := splitDashDash(g.args)
		q := parseArgs(before, optSpec{arg: "bBU", long: []string{"orphan", "conflict", "pathspec-from-file", "inter-hunk-context"}})
		if q.has("f", "force") {
			return true, "git checkout --force discards uncommitted changes"
		}
		if dd && len(after) > 0 {
			return true, "git checkout -- PATH discards uncommitted changes to PATH"
		}
		if q.has("pathspec-from-file") {
			return true, "git checkout of paths discards uncommitted changes"
		}
		for _, f := range q.pos {
			if f.text == "." || f.text == ".." || strings.HasPrefix(f.text, ":") || strings.HasPrefix(f.text, "./") || strings.ContainsAny(f.text, "*?[") {
				return true, "git checkout " + f.text + " discards uncommitted changes"
			}
		}
	case "restore":
		q := parseArgs(g.args, optSpec{arg: "s", long: []string{"source", "pathspec-from-file", "conflict", "inter-hunk-context"}})
		if q.has("S", "staged") && !q.has("W", "worktree") {
			return false, ""
		}
		return true, "git restore discards uncommitted changes"
	case "switch":
		if q := parseArgs(g.args, optSpec{arg: "cC", long: []string{"create", "force-create", "orphan", "conflict"}}); q.has("f", "force", "discard-changes") {
			return true, "git switch --discard-changes discards uncommitted changes"
		}
	case "stash":
		if len(g.args) > 0 && (g.args[0].text == "list" || g.args[0].text == "show") {
			return false, ""
		}
		return true, "git stash removes uncommitted changes from the worktree"
	}
	return false, ""
}
