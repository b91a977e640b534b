package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/harness-agent/harness/internal/cycle"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/summary"
)

const ruleScope = "scope-lock"

// myClaims returns the tasks in progress that belong to this session or
// worker: in exclusive mode every one (one session owns the project), in
// concurrent mode those claimed by this worker.
func myClaims(sum *summary.Summary) []summary.Claim {
	if !sum.Concurrent {
		return sum.InProgress
	}
	me := cycle.WorkerID()
	var out []summary.Claim
	for _, cl := range sum.InProgress {
		if cl.ClaimedBy == me {
			out = append(out, cl)
		}
	}
	return out
}

func (c *call) scopeCheck(targets []string, op string) hook.Decision {
	ops := make([]string, len(targets))
	for i := range ops {
		ops[i] = op
	}
	return c.scopeCheckOps(targets, ops)
}

// scopeCheckOps denies writes outside the allowed_paths of this session's
// task in progress. Paths outside the project are not the task's concern.
func (c *call) scopeCheckOps(targets, ops []string) hook.Decision {
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
	base := worktreeTop(c.cwd)
	if base == "" {
		base = c.dir
	}
	for i, target := range targets {
		target = resolve(target)
		rel, err := filepath.Rel(base, target)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		if c.harnessName(target) != "" {
			continue // policed by the state-file rules
		}
		if !matchAny(globs, filepath.ToSlash(rel)) {
			return deny(ruleScope, fmt.Sprintf("`%s` writes %s, outside the scope of %s. Permitted: %s.", ops[i], rel, strings.Join(ids, ", "), strings.Join(globs, ", ")),
				"keep the change inside the permitted paths; if the task truly needs more, record it with `harness fail ID --category CONFIG \"needs …\"` and tell the user.")
		}
	}
	return hook.Decision{}
}

// worktreeTop returns the top of the git work tree holding dir (a .git
// directory or file), found by stat alone, or "".
func worktreeTop(dir string) string {
	for i := 0; i < 64 && dir != ""; i++ {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
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

func matchAny(globs []string, rel string) bool {
	for _, g := range globs {
		if globMatch(g, rel) {
			return true
		}
	}
	return false
}

// globMatch matches a slash-separated relative path against a scope glob:
// `*` and `?` stay within one path segment, `**` spans any number of them,
// and a glob naming a directory (a trailing `/`, or no wildcard at all)
// covers everything below it.
func globMatch(glob, rel string) bool {
	glob = strings.TrimPrefix(filepath.ToSlash(glob), "./")
	if glob == "" {
		return false
	}
	if strings.HasSuffix(glob, "/") {
		glob += "**"
	} else if !strings.ContainsAny(glob, "*?[") {
		if rel == glob || strings.HasPrefix(rel, glob+"/") {
			return true
		}
	}
	re, err := globRegexp(glob)
	return err == nil && re.MatchString(rel)
}

func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch ch := glob[i]; {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case ch == '*':
			b.WriteString("[^/]*")
		case ch == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}
