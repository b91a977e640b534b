package scope

import (
	"path/filepath"
	"strings"
)

// Overlap reports whether two scopes may both cover one path: some glob
// of a and some glob of b could match the same file. It compares the
// globs' literal leads (the text before their first wildcard), so it errs
// on the side of an overlap (`src/*.go` and `src/*_test.go` overlap) but
// never misses one. An empty scope (no allowed_paths) overlaps nothing:
// the task said nothing of where it works.
func Overlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if globsOverlap(x, y) {
				return true
			}
		}
	}
	return false
}

func globsOverlap(x, y string) bool {
	lx, ly := lead(x), lead(y)
	if lx == "" || ly == "" {
		return x != "" && y != ""
	}
	return strings.HasPrefix(lx, ly) || strings.HasPrefix(ly, lx)
}

// lead is the literal start of a glob, ended with "/" when it is a whole
// directory (a glob with no wildcard covers what lies below it), so that
// "src/a" and "src/ab" do not overlap but "src/a" and "src/a/b.go" do.
func lead(glob string) string {
	glob = strings.TrimPrefix(filepath.ToSlash(glob), "./")
	if i := strings.IndexAny(glob, "*?["); i >= 0 {
		return glob[:i]
	}
	if glob != "" && !strings.HasSuffix(glob, "/") {
		glob += "/"
	}
	return glob
}
