package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/scope"
	"github.com/harness-agent/harness/internal/shellscan"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/taskcycle"
)

const ruleScope = "scope-lock"

// myClaims returns the tasks in progress that belong to this session or
// worker: in exclusive mode every one (one session owns the project), in
// concurrent mode those claimed by this worker.
func myClaims(sum *statecache.Summary) []statecache.Claim {
	if !sum.Concurrent {
		return sum.InProgress
	}
	me := taskcycle.WorkerID()
	var out []statecache.Claim
	for _, cl := range sum.InProgress {
		if cl.ClaimedBy == me {
			out = append(out, cl)
		}
	}
	return out
}

// scoped is one write the scope lock judges.
type scoped struct {
	path string // absolute; for a dynamic write, the directory known to hold it
	op   string
	// tree: everything below path may be affected too (rm -r, mv of a
	// directory, find -delete); mkdir: path is a directory being created;
	// dynamic: the write's target is somewhere below path.
	tree, mkdir, dynamic bool
	// removal: the write deletes or moves away what it reaches (rm -r,
	// find -delete, mv), rather than rewriting files in place.
	removal bool
}

// scopeCheck judges the write of one file by a file tool.
func (c *call) scopeCheck(target, op string) hook.Decision {
	return c.scopeCheckWrites([]scoped{{path: target, op: op}})
}

// scopeWrites judges the writes a Bash command may make. A target not known
// statically is judged by the directory known to hold it: `rm lib/*` is out
// of a `src/**` scope whatever the glob matches.
func (c *call) scopeWrites(writes []shellscan.Write) hook.Decision {
	var ws []scoped
	for _, w := range writes {
		switch w.Kind {
		case shellscan.GitRestore, shellscan.GitIndex, shellscan.LinkSource:
			continue // git's own restores; a link's source is read, not written
		}
		s := scoped{path: w.Path, op: w.Op, tree: w.Tree, mkdir: w.Kind == shellscan.Mkdir, dynamic: w.Dynamic,
			removal: w.Kind == shellscan.Remove || w.Kind == shellscan.MoveSource}
		if w.Dynamic {
			if s.path = w.Under(); s.path == "" {
				continue // may be anywhere, most often outside the project
			}
		}
		ws = append(ws, s)
	}
	if len(ws) == 0 {
		return hook.Decision{}
	}
	return c.scopeCheckWrites(ws)
}

// scopeCheckWrites denies writes outside the allowed_paths of this session's
// task in progress. Paths outside the project are not the task's concern.
func (c *call) scopeCheckWrites(writes []scoped) hook.Decision {
	sum, err := c.summary()
	if err != nil {
		return hook.Decision{}
	}
	var globs []string
	var ids []string
	for _, cl := range myClaims(sum) {
		if len(cl.AllowedPaths) > 0 {
			globs = append(globs, cl.AllowedPaths...)
			ids = append(ids, cl.ID)
		}
	}
	if len(globs) == 0 {
		return hook.Decision{}
	}
	base := git.NearestTop(c.cwd)
	if base == "" {
		base = c.Root
	}
	for _, w := range writes {
		target := resolve(w.path)
		rel, err := filepath.Rel(base, target)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		if c.harnessName(target) != "" {
			continue // policed by the state-file rules
		}
		rel = filepath.ToSlash(rel)
		if inScope(globs, rel, w, target) || !w.dynamic && cannotHappen(target, w.op, writes) {
			continue
		}
		what := fmt.Sprintf("`%s` writes %s", w.op, rel)
		if w.dynamic {
			what = fmt.Sprintf("`%s` writes in %s (its target is not known statically, but no permitted path lies there)", w.op, rel+"/")
		}
		return deny(ruleScope, fmt.Sprintf("%s, outside the scope of %s. Permitted: %s.", what, strings.Join(ids, ", "), strings.Join(globs, ", ")),
			"keep the change inside the permitted paths; if the task truly needs more, record it with `harness fail ID --category CONFIG \"needs …\"` and tell the user.")
	}
	return hook.Decision{}
}

// inScope decides one write at rel (slash-separated, relative to the work
// tree; "." for its top). A directory may be created on the way to the
// permitted paths; a tree write must stay inside them, unless its target
// turns out to be a plain file; a write whose target is not known is
// allowed while a permitted path may lie below its directory.
func inScope(globs []string, rel string, w scoped, target string) bool {
	switch {
	case w.dynamic, w.mkdir:
		return anyBelow(globs, rel)
	case w.tree && !w.removal:
		// A tool that rewrites files in place below a directory (`gofmt -w
		// .`, `black .`, `git apply`, `patch`) may touch only permitted
		// files: allowed while a permitted path lies below. What it really
		// changed is checked exactly when the task is validated ([SCOPE]).
		if anyBelow(globs, rel) || coversTree(globs, rel) {
			return true
		}
		if fi, err := os.Stat(target); err == nil && fi.IsDir() {
			return false
		}
	case w.tree:
		if coversTree(globs, rel) {
			return true
		}
		if fi, err := os.Stat(target); err == nil && fi.IsDir() {
			return false
		}
	}
	return rel != "." && scope.Match(globs, rel)
}

// cannotHappen reports the second reading of a cp/mv/ln destination that
// cannot happen: "mv docs/a.md docs/b.md" is reported both as docs/b.md and
// as docs/b.md/a.md, and the second needs docs/b.md to be a directory,
// which it is not and which no other part of the command creates.
func cannotHappen(target, op string, writes []scoped) bool {
	parent := filepath.Dir(target)
	if fi, err := os.Stat(parent); err == nil && fi.IsDir() || err != nil && !os.IsNotExist(err) {
		return false
	}
	other := false
	for _, o := range writes {
		p := resolve(o.path)
		if o.op == op {
			other = other || p == parent
			continue
		}
		if o.dynamic || p == parent || strings.HasPrefix(parent, p+"/") || o.mkdir && strings.HasPrefix(p, parent+"/") {
			return false // may create it
		}
	}
	return other
}

// probe is a path segment no glob spells out: only a wildcard matches it.
const probe = "\x7f"

// coversTree reports whether some glob permits everything below dir.
func coversTree(globs []string, dir string) bool {
	prefix := dir + "/"
	if dir == "." {
		prefix = ""
	}
	for _, g := range globs {
		if scope.MatchGlob(g, prefix+probe) && scope.MatchGlob(g, prefix+probe+"/"+probe) {
			return true
		}
	}
	return false
}

// anyBelow reports whether some glob may permit dir itself or a path below
// it.
func anyBelow(globs []string, dir string) bool {
	if dir == "." {
		return true
	}
	for _, g := range globs {
		if scope.MatchGlob(g, dir) || globReachesBelow(g, strings.Split(dir, "/")) {
			return true
		}
	}
	return false
}

// globReachesBelow walks glob segment by segment along dir: true when dir
// is (a prefix of) where the glob's matches lie.
func globReachesBelow(glob string, dir []string) bool {
	glob = strings.TrimPrefix(filepath.ToSlash(glob), "./")
	if glob == "" {
		return false
	}
	segs := strings.Split(strings.TrimSuffix(glob, "/"), "/")
	for i, d := range dir {
		if i >= len(segs) {
			// the glob ended above dir: only a directory glob covers below
			return strings.HasSuffix(glob, "/") || !strings.ContainsAny(glob, "*?")
		}
		if strings.Contains(segs[i], "**") {
			return true
		}
		if !scope.MatchGlob(segs[i], d) {
			return false
		}
	}
	return true
}
