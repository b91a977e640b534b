package shellscan

import (
	"path"
	"strings"
)

// wildAny stands, inside a pattern, for any sequence of bytes including "/".
// Every part of a word that cannot be resolved statically (a variable, a
// command substitution, a glob) becomes one, so patterns over-approximate.
const wildAny = '\x00'

// wildGlob is a glob character (*, ?, […]). It matches like wildAny (an
// over-approximation: a real * stops at "/"), but unlike an unresolved
// variable a glob cannot turn a relative word into an absolute path.
const wildGlob = '\x01'

// field is one shell word after the expansions this package can do
// statically. text is what to show a person (unresolved parts keep their
// source form); pat is what to match against (unresolved parts are wildAny).
type field struct {
	text string
	pat  string
	dyn  bool
	// feed is the literal text behind a <(…) process substitution, for
	// "source <(echo …)" and "bash <(echo …)".
	feed *string
	// raw is text before lexical cleaning, for paths joined to a
	// directory (see Write.Raw); "" when the same as text.
	raw string
	// fresh is set for a name mktemp has just created (a file, or with -d
	// a directory) and paths below it: none of them is a path that
	// existed before the command, whatever the pattern may match.
	fresh bool
}

func (f field) rawText() string {
	if f.raw != "" {
		return f.raw
	}
	return f.text
}

func lit(s string) field { return field{text: s, pat: s} }

// anyField is a value nothing is known about.
func anyField(text string) field {
	return field{text: text, pat: string(wildAny), dyn: true}
}

// unknownDir is the working directory after a cd this package cannot follow.
var unknownDir = anyField("$PWD")

func (f field) isAbs() bool { return strings.HasPrefix(f.pat, "/") }

// floating reports whether the pattern may already be absolute, so it must
// not be joined to a directory.
func (f field) floating() bool { return len(f.pat) > 0 && f.pat[0] == wildAny }

func concat(x, y field) field {
	f := field{text: x.text + y.text, pat: x.pat + y.pat, dyn: x.dyn || y.dyn}
	xEmpty, yEmpty := x.text == "" && x.pat == "", y.text == "" && y.pat == ""
	if xEmpty {
		f.feed = y.feed
	}
	// A fresh name stays fresh only as the whole word, or followed by
	// "/name" below it: "$(mktemp)x" names some other file, and ".."
	// climbs back out.
	switch {
	case xEmpty:
		f.fresh = y.fresh
	case yEmpty:
		f.fresh = x.fresh
	case x.fresh && !y.dyn && strings.HasPrefix(y.text, "/") && !strings.Contains(y.text, ".."):
		f.fresh = true
	}
	return f
}

// joinPath resolves rel against dir the way the kernel would resolve a
// relative path against the working directory.
func joinPath(dir, rel field) field {
	if rel.isAbs() || rel.floating() || dir.text == "" {
		f := cleanField(rel)
		if !f.dyn && rel.rawText() != f.text {
			f.raw = rel.rawText()
		}
		f.fresh = rel.fresh
		return f
	}
	f := cleanField(field{
		text: dir.text + "/" + rel.text,
		pat:  dir.pat + "/" + rel.pat,
		dyn:  dir.dyn || rel.dyn,
	})
	if !f.dyn {
		if raw := dir.rawText() + "/" + rel.rawText(); raw != f.text {
			f.raw = raw
		}
	}
	f.fresh = rel.fresh
	return f
}

func cleanField(f field) field {
	if !f.dyn {
		c := path.Clean(f.text)
		return field{text: c, pat: c}
	}
	if !strings.Contains(f.text, "..") {
		f.text = path.Clean(f.text)
	}
	f.pat = cleanPattern(f.pat)
	return f
}

// cleanPattern is path.Clean for patterns: a ".." after a wildcard segment
// cannot be resolved (the wildcard may span several directories), so the
// whole prefix collapses to a wildcard.
func cleanPattern(p string) string {
	if p == "" {
		return "."
	}
	abs := p[0] == '/'
	segs := strings.Split(p, "/")
	out := segs[:0]
	for _, s := range segs {
		switch s {
		case "", ".":
			continue
		case "..":
			wild := false
			for _, o := range out {
				if strings.ContainsAny(o, string(wildAny)+string(wildGlob)) {
					wild = true
					break
				}
			}
			switch {
			case wild:
				out = append(out[:0], string(wildAny))
				abs = false
			case len(out) > 0 && out[len(out)-1] != "..":
				out = out[:len(out)-1]
			case !abs:
				out = append(out, "..")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if abs {
		return "/" + r
	}
	if r == "" {
		return "."
	}
	return r
}

// baseField is path.Base for fields: the last element, which is what cp and
// mv create inside a target directory.
func baseField(f field) field {
	t := strings.TrimRight(f.text, "/")
	p := strings.TrimRight(f.pat, "/")
	if i := strings.LastIndexByte(t, '/'); i >= 0 {
		t = t[i+1:]
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if t == "" {
		t = "/"
	}
	if p == "" {
		p = "/"
	}
	return field{text: t, pat: p, dyn: f.dyn && strings.ContainsAny(p, string(wildAny)+string(wildGlob))}
}

// globMatch reports whether name matches pattern, where wildAny matches any
// sequence of bytes (including none and including "/"). It is the classic
// linear backtracking matcher for a single kind of star.
func globMatch(pattern, name string) bool {
	px, nx := 0, 0
	nextPx, nextNx := -1, -1
	for px < len(pattern) || nx < len(name) {
		if px < len(pattern) {
			c := pattern[px]
			if c == wildAny || c == wildGlob {
				nextPx, nextNx = px, nx+1
				px++
				continue
			}
			if nx < len(name) && name[nx] == c {
				px++
				nx++
				continue
			}
		}
		if nextPx >= 0 && nextNx <= len(name) {
			px, nx = nextPx, nextNx
			continue
		}
		return false
	}
	return true
}
