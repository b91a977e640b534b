package shellscan

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// gitCmd is a git command line split into its parts.
type gitCmd struct {
	chdirs   []field // -C DIR, in order
	worktree *field  // --work-tree DIR
	configs  []field // -c KEY=VALUE, in order
	sub      string
	args     []field
	// shell is the command a "!"-alias runs instead of a git subcommand.
	shell *field
}

// parseGit skips git's global options, which come before the subcommand
// and are where "git -C elsewhere reset --hard" hides, and expands an alias
// defined with -c alias.NAME=… on the same command line.
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
		case t == "-c":
			if i+1 < len(args) {
				g.configs = append(g.configs, args[i+1])
				i++
			}
		case t == "--work-tree":
			if i+1 < len(args) {
				w := args[i+1]
				g.worktree = &w
				i++
			}
		case strings.HasPrefix(t, "--work-tree="):
			w := sub(args[i], len("--work-tree="))
			g.worktree = &w
		case t == "--git-dir" || t == "--namespace" || t == "--super-prefix" || t == "--config-env":
			i++
		case strings.HasPrefix(t, "-C") && len(t) > 2:
			g.chdirs = append(g.chdirs, sub(args[i], 2))
		case strings.HasPrefix(t, "-c") && len(t) > 2:
			g.configs = append(g.configs, sub(args[i], 2))
		case strings.HasPrefix(t, "-"):
			// --no-pager, -p, --bare, --git-dir=…, and the like.
		default:
			g.sub = t
			g.args = args[i+1:]
			g.expandAlias()
			return g
		}
	}
	return g
}

// expandAlias replaces an alias given with -c by what it stands for.
func (g *gitCmd) expandAlias() {
	for i := len(g.configs) - 1; i >= 0; i-- {
		key, val, ok := strings.Cut(g.configs[i].text, "=")
		if !ok || !strings.EqualFold(key, "alias."+g.sub) {
			continue
		}
		if strings.HasPrefix(val, "!") {
			sh := lit(val[1:] + " " + joinText(g.args))
			g.shell, g.sub, g.args = &sh, "", nil
			return
		}
		words := strings.Fields(val)
		if len(words) == 0 {
			return
		}
		var args []field
		for _, w := range words[1:] {
			args = append(args, lit(strings.Trim(w, `'"`)))
		}
		g.sub, g.args = words[0], append(args, g.args...)
		return
	}
}

// gitExecKeys are config keys whose value git runs as a shell command.
var gitExecKeys = []string{
	"core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.askpass", "core.hookspath",
	"diff.external", "sequence.editor", "gpg.program", "credential.helper", "pager.", "difftool.",
	"mergetool.", "filter.", "diff.", "merge.", "uploadpack.packobjectshook", "protocol.ext.",
}

// execConfig returns the shell command a -c KEY=VALUE makes git run, or "".
func execConfig(kv string) string {
	key, val, ok := strings.Cut(kv, "=")
	if !ok {
		return ""
	}
	key = strings.ToLower(key)
	for _, k := range gitExecKeys {
		if key == k || strings.HasSuffix(k, ".") && strings.HasPrefix(key, k) {
			return strings.TrimPrefix(val, "!")
		}
	}
	return ""
}

// GitDirs returns the directories a git program works in: its starting
// directories with -C and --work-tree applied; "" stands for one that is
// not known statically.
func GitDirs(p Program) []string {
	g := parseGit(fieldsOf(p.Args))
	out := make([]string, 0, len(p.Dirs))
	for _, d := range p.Dirs {
		if d == "" {
			out = append(out, "")
			continue
		}
		dirs := []field{lit(d)}
		for _, c := range g.chdirs {
			dirs = chdirs(dirs, c)
		}
		if g.worktree != nil {
			dirs = chdirs(dirs, *g.worktree)
		}
		for _, x := range dirs {
			if x.dyn {
				out = append(out, "")
			} else {
				out = append(out, x.text)
			}
		}
	}
	return out
}

func fieldsOf(args []string) []field {
	fs := make([]field, len(args))
	for i, s := range args {
		if strings.HasPrefix(s, "$") || strings.ContainsAny(s, "`") {
			fs[i] = anyField(s)
		} else {
			fs[i] = lit(s)
		}
	}
	return fs
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
	for _, kv := range g.configs {
		if sh := execConfig(kv.text); sh != "" {
			a.script(sh, cc.st.clone(), syntax.LangBash, false)
		}
	}
	if g.shell != nil {
		a.script(g.shell.text, cc.st.clone(), syntax.LangBash, false)
		return c.same()
	}
	a.gitRuns(c, cc, g)
	a.gitWrites(cc, c.op, g)
	return c.same()
}

// gitWorktree reports what a git subcommand writes in the work tree, from
// the directories in st, for the command op.
type gitWorktree struct {
	a  *analyzer
	st *state
	op string
}

// worktree reports the whole work tree, whose root is not known here.
func (w gitWorktree) worktree(kind WriteKind, reach Reach) {
	for _, d := range w.st.dirs {
		w.a.writeReach(w.st, field{text: d.text, pat: string(wildAny), dyn: true}, kind, w.op, true, reach)
	}
}

// specs reports the pathspecs fs.
func (w gitWorktree) specs(fs []field, kind WriteKind, tree bool, reach Reach) {
	for _, f := range fs {
		w.a.writeReach(w.st, pathspec(f), kind, w.op, tree, reach)
	}
}

// gitWrites reports the files git subcommand g (run in cc) changes.
func (a *analyzer) gitWrites(cc *ctx, op string, g gitCmd) {
	w := gitWorktree{a: a, st: cc.st, op: op}
	switch g.sub {
	case "checkout":
		before, after, dd := splitDashDash(g.args)
		p := parseArgs(before, optSpec{arg: "bBU", long: []string{"orphan", "conflict", "pathspec-from-file", "inter-hunk-context"}})
		if p.has("f", "force") || p.has("pathspec-from-file") {
			w.worktree(GitRestore, ReachTracked)
		}
		if dd {
			w.specs(after, GitRestore, true, ReachTracked)
		}
		if !dd && !p.has("b", "B", "orphan") {
			// Without "--" a word may be a branch or a path; assume path.
			w.specs(p.pos, GitRestore, true, ReachTracked)
		}
	case "checkout-index":
		p := parseArgs(g.args, optSpec{long: []string{"prefix", "stage"}})
		if p.has("a", "all") || p.has("stdin") {
			w.worktree(GitRestore, ReachTracked)
		}
		w.specs(p.pos, GitRestore, false, ReachTracked)
	case "restore":
		p := parseArgs(g.args, optSpec{arg: "s", long: []string{"source", "pathspec-from-file", "conflict", "inter-hunk-context"}})
		if p.has("S", "staged") && !p.has("W", "worktree") {
			break // only the index changes
		}
		if p.has("pathspec-from-file") {
			w.worktree(GitRestore, ReachTracked)
		}
		w.specs(p.pos, GitRestore, true, ReachTracked)
	case "reset":
		if p := parseArgs(g.args, optSpec{}); p.has("hard", "merge", "keep") {
			w.worktree(GitRestore, ReachTracked)
		}
	case "stash":
		subc := ""
		if len(g.args) > 0 && !strings.HasPrefix(g.args[0].text, "-") {
			subc = g.args[0].text
		}
		switch subc {
		case "list", "show", "drop", "clear", "create", "store", "branch":
		default:
			p := parseArgs(g.args, optSpec{arg: "m", long: []string{"message", "pathspec-from-file"}})
			switch {
			case p.has("a", "all"):
				w.worktree(GitRestore, ReachAll)
			case p.has("u", "include-untracked"):
				w.worktree(GitRestore, ReachUnignored)
			default:
				w.worktree(GitRestore, ReachTracked)
			}
		}
	case "clean":
		p := parseArgs(g.args, optSpec{arg: "e", long: []string{"exclude"}})
		if p.has("n", "dry-run") {
			break
		}
		if len(p.pos) == 0 {
			p.pos = []field{lit(".")}
		}
		reach := ReachUnignored
		if p.has("x", "X") {
			reach = ReachAll
		}
		w.specs(p.pos, Remove, true, reach)
	case "rm":
		p := parseArgs(g.args, optSpec{long: []string{"pathspec-from-file"}})
		if p.has("cached", "n", "dry-run") {
			break
		}
		w.specs(p.pos, Remove, p.has("r"), ReachAll)
	case "mv":
		p := parseArgs(g.args, optSpec{})
		a.copyLike(cc, p, MoveTarget, true)
	case "switch":
		if p := parseArgs(g.args, optSpec{arg: "cC", long: []string{"create", "force-create", "orphan", "conflict"}}); p.has("f", "force", "discard-changes") {
			w.worktree(GitRestore, ReachTracked)
		}
	case "add":
		// Forcing an ignored file into the index lets later checkouts and
		// stashes rewrite it.
		p := parseArgs(g.args, optSpec{long: []string{"chmod", "pathspec-from-file"}})
		if p.has("f", "force") {
			if len(p.pos) == 0 {
				p.pos = []field{lit(".")}
			}
			w.specs(p.pos, GitIndex, true, ReachAll)
		}
	case "update-index":
		a.gitUpdateIndex(w.st, w.op, g.args)
	case "apply":
		p := parseArgs(g.args, optSpec{arg: "pC", long: []string{"exclude", "include", "directory", "whitespace", "build-fake-ancestor"}})
		if p.has("stat", "numstat", "summary", "check", "cached") && !p.has("index", "3way", "3") {
			break
		}
		dir := lit(".")
		if ds := p.vals("directory"); len(ds) > 0 {
			dir = ds[len(ds)-1]
		}
		// The files are named inside the patch.
		a.write(w.st, dir, InPlace, w.op, true)
	case "submodule":
		if len(g.args) > 0 && g.args[0].text == "foreach" {
			p := parseArgs(g.args[1:], optSpec{stop: true})
			a.script(joinText(p.pos), w.st.clone(), syntax.LangBash, false)
		}
	}
}

// gitUpdateIndex reports the files whose index entries git update-index
// sets: its operands and the paths of --cacheinfo.
func (a *analyzer) gitUpdateIndex(st *state, op string, args []field) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--cacheinfo":
			// --cacheinfo MODE,SHA,PATH or --cacheinfo MODE SHA PATH
			if i+1 < len(args) && strings.Count(args[i+1].text, ",") >= 2 {
				parts := strings.SplitN(args[i+1].text, ",", 3)
				a.write(st, lit(parts[2]), GitIndex, op, false)
				i++
			} else if i+3 < len(args) {
				a.write(st, args[i+3], GitIndex, op, false)
				i += 3
			}
		case t == "--index-info" || t == "--stdin":
			a.write(st, anyField("<stdin>"), GitIndex, op, false)
		case t == "--chmod" || t == "--info-only" || strings.HasPrefix(t, "-"):
		default:
			a.write(st, args[i], GitIndex, op, false)
		}
	}
}

// IsDestructiveGit reports whether p is a git command that throws away
// uncommitted work, and why: git reset --hard/--merge/--keep, git clean
// (but -n), git checkout with pathspecs or -f (git checkout . and
// git checkout -- FILE), git restore of the worktree (git restore --staged
// alone only unstages and is allowed), git switch --discard-changes/-f,
// git checkout-index -f, and git stash except list, show, drop, clear,
// create and store. Global options such as -C DIR are skipped and an alias
// defined with -c is expanded. A plain "git checkout WORD" may switch
// branches or restore a file: see GitCheckoutWords.
func IsDestructiveGit(p Program) (bool, string) {
	if p.Dynamic || p.Base() != "git" {
		return false, ""
	}
	g := parseGit(fieldsOf(p.Args))
	switch g.sub {
	case "reset":
		if q := parseArgs(g.args, optSpec{}); q.has("hard", "merge", "keep") {
			return true, "git reset --hard discards uncommitted changes"
		}
	case "clean":
		if q := parseArgs(g.args, optSpec{arg: "e", long: []string{"exclude"}}); !q.has("n", "dry-run") {
			return true, "git clean deletes untracked files"
		}
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
			if f.text == "." || f.text == ".." || strings.HasPrefix(f.text, ":") || strings.HasPrefix(f.text, "./") || strings.ContainsAny(f.text, "*?[/") {
				return true, "git checkout " + f.text + " discards uncommitted changes"
			}
		}
	case "checkout-index":
		if q := parseArgs(g.args, optSpec{long: []string{"prefix", "stage"}}); q.has("f", "force") {
			return true, "git checkout-index --force overwrites uncommitted changes"
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
		if len(g.args) > 0 {
			switch g.args[0].text {
			case "list", "show", "drop", "clear", "create", "store":
				return false, ""
			}
		}
		return true, "git stash removes uncommitted changes from the worktree"
	}
	return false, ""
}

// GitCheckoutWords returns the words of a "git checkout WORD…" without "--"
// or -b that may name files rather than a branch: git restores them from
// the index when they are files. A caller that can look at the disk tells.
func GitCheckoutWords(p Program) []string {
	if p.Dynamic || p.Base() != "git" {
		return nil
	}
	g := parseGit(fieldsOf(p.Args))
	if g.sub != "checkout" {
		return nil
	}
	before, _, dd := splitDashDash(g.args)
	q := parseArgs(before, optSpec{arg: "bBU", long: []string{"orphan", "conflict", "pathspec-from-file", "inter-hunk-context"}})
	if dd || q.has("b", "B", "orphan") {
		return nil
	}
	var out []string
	for _, f := range q.pos {
		out = append(out, f.text)
	}
	return out
}

// gitCommandEnv are the environment variables whose value git runs as a
// command (through the shell) for some of its subcommands.
var gitCommandEnv = []string{"GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER",
	"GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND"}

// gitRunFlags are the flags of a subcommand whose value git runs as a
// command (a switch: a map literal would be built at every hook's start).
func gitRunFlags(sub string) []string {
	switch sub {
	case "rebase":
		return []string{"x", "exec"}
	case "difftool":
		return []string{"x", "extcmd"}
	case "filter-branch":
		return []string{"tree-filter", "index-filter", "msg-filter", "env-filter", "commit-filter", "parent-filter", "tag-name-filter"}
	}
	return nil
}

// gitRuns follows the commands git is told to run besides its own work:
// ones named by environment variables (GIT_SSH_COMMAND, GIT_PAGER,
// GIT_EXTERNAL_DIFF, …), by flags (rebase -x, difftool -x, filter-branch
// --tree-filter, …) and by `git bisect run CMD ARGS`. Each is analysed as
// the shell command it is, so allowed_commands sees its programs.
func (a *analyzer) gitRuns(c, cc *ctx, g gitCmd) {
	for _, name := range gitCommandEnv {
		if v, ok := c.getenv(a, name); ok {
			a.runsCommand(cc, v)
		}
	}
	if g.sub == "bisect" && len(g.args) > 1 && g.args[0].text == "run" {
		a.dispatch(&ctx{st: cc.st.clone(), op: c.op, env: c.env}, g.args[1:])
		return
	}
	flags := gitRunFlags(g.sub)
	for j := 0; j < len(g.args) && len(flags) > 0; j++ {
		t := g.args[j].text
		if t == "--" {
			break
		}
		name, val, eq := strings.Cut(strings.TrimLeft(t, "-"), "=")
		if !strings.HasPrefix(t, "-") || !slices.Contains(flags, name) {
			continue
		}
		switch {
		case eq:
			a.runsCommand(cc, sub(g.args[j], len(t)-len(val)))
		case j+1 < len(g.args):
			j++
			a.runsCommand(cc, g.args[j])
		}
	}
}

// runsCommand analyses v as a shell command that will run; a value not
// known statically may run any program.
func (a *analyzer) runsCommand(c *ctx, v field) {
	if v.dyn {
		a.addProgram(anyField(v.text), nil, c.st.dirs)
		return
	}
	a.script(v.text, c.st.clone(), syntax.LangBash, false)
}
