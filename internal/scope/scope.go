// Package scope matches paths against a task's allowed_paths globs: the
// scope lock, checked early by the guard (a write it is sure of) and exactly
// by `harness validate` (what the attempt really changed).
package scope

import (
	"path/filepath"
	"regexp"
	"strings"
)

// Match reports whether rel (slash-separated, relative to the work tree)
// matches any of globs.
func Match(globs []string, rel string) bool {
	for _, g := range globs {
		if MatchGlob(g, rel) {
			return true
		}
	}
	return false
}

// MatchGlob matches a slash-separated relative path against a scope glob:
// `*` and `?` stay within one path segment, `**` spans any number of them,
// and a glob naming a directory (a trailing `/`, or no wildcard at all)
// covers everything below it.
func MatchGlob(glob, rel string) bool {
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
