// Package shellscan tells what a Bash command string does to the filesystem
// and which programs it runs, without running it.
//
// It exists because the harness's pre-tool-use hook must stop the agent from
// tampering with the harness's own state files (harness-tasks.json,
// harness-progress.txt, .harness-* markers) through the Bash tool, keep
// writes inside a task's scope, and enforce command allowlists. Matching the
// raw command string with regular expressions is trivially evaded by quoting,
// nesting (bash -c, eval, $(…)), cd, brace expansion and the like, so this
// package parses the command with mvdan.cc/sh and walks it the way Bash would.
//
// The analysis is deliberately conservative: when it cannot tell exactly what
// a command touches it over-reports (a Write marked Dynamic, or a Tree write)
// rather than staying silent. It is pure (it never touches the filesystem;
// the only outside input is $HOME), bounded in work, and never panics, since
// the hook runs before every tool call.
package shellscan

import (
	"errors"
	"path"
	"strings"
)

// Analyze parses command as the Bash tool would run it, in working directory
// cwd (which should be absolute and clean; relative paths in the command are
// resolved against it and against the command's own cd's), and reports what
// it may write and run.
func Analyze(command, cwd string) (r Report) {
	a := newAnalyzer(cwd)
	defer func() {
		// The analysis is written to be panic-free; this only keeps a bug
		// from crashing the hook. What was found so far is still returned,
		// flagged as incomplete so a strict policy can deny.
		if p := recover(); p != nil {
			if repanic {
				panic(p)
			}
			a.incomplete = true
			if a.parseErr == nil {
				a.parseErr = errInternal
			}
			r = a.report()
		}
	}()
	a.run(command)
	return a.report()
}

// repanic lets tests and the fuzzer see panics the recover above would hide.
var repanic = false

// Report is what Analyze found.
type Report struct {
	// ParseError is non-nil when the command, or a shell script nested in it
	// (bash -c, eval, a here-document fed to a shell), does not parse or is
	// too large or deeply nested to parse. What parsed is still analysed, and
	// Mentions falls back to whitespace-separated words.
	ParseError error
	// Incomplete is set when a work limit was hit or the command could not
	// be fully parsed, so Writes and Programs may be missing entries.
	Incomplete bool
	// Writes lists every file the command may create, modify, truncate,
	// move or delete, deduplicated, in the order found.
	Writes []Write
	// Programs lists every simple command that may run, including the ones
	// behind wrappers (env, sudo, timeout, xargs, find -exec, …; the wrapper
	// itself is listed too) and inside nested scripts, deduplicated.
	Programs []Program
	// Mentions lists every word of the command with quoting removed
	// (arguments, redirect targets, assigned values, here-document bodies,
	// code strings), so a caller can ask whether a file name appears at all,
	// even where this package does not understand what is done with it.
	Mentions []string
}

// Write is one place the command may write.
type Write struct {
	// Path is the target, cleaned, and absolute when it could be resolved
	// against cwd. Parts that could not be resolved statically keep their
	// source form (for example "$OUT/x" or "/repo/*.json").
	Path string
	Kind WriteKind
	// Op is the source fragment responsible, for deny messages. It may be
	// shortened.
	Op string
	// Dynamic is set when Path contains an expansion, glob or unknown
	// directory that could not be resolved statically.
	Dynamic bool
	// Tree is set when everything below Path may be affected too (rm -r,
	// moving a directory, find -delete, git checkout ., …).
	Tree bool
	// Raw is the path joined to its directory without lexical cleaning,
	// set only when it has ".." components: the kernel follows a symlink
	// before the ".." after it (a/link/../x is not a/x), so a caller that
	// can look at the disk should resolve Raw too.
	Raw string
	// Reach narrows which files a git command can affect under Path: git
	// checkout, restore and reset --hard touch only files git tracks; git
	// clean and git stash -u also untracked files, but not ignored ones.
	Reach Reach

	// pattern is Path with each unresolved part replaced by a wildcard, so
	// Touches can over-approximate what a dynamic write may hit.
	pattern string
	// fresh is set when Path is a name mktemp created in this command (or
	// a path below one): it is none of the files that existed before.
	fresh bool
}

// Touches reports whether the write may affect the file at target, an
// absolute clean path. Dynamic writes match any path their unresolved parts
// could expand to (an unresolved variable matches anything, across "/").
func (w Write) Touches(target string) bool {
	if w.fresh {
		// mktemp creates its name exclusively: the target, which
		// exists, is not it (even when the pattern, "$TMPDIR/tmp.*",
		// matches a project or lock directory made by mktemp -d).
		return false
	}
	p := w.pattern
	if p == "" {
		p = w.Path
	}
	if globMatch(p, target) {
		return true
	}
	return w.Tree && globMatch(strings.TrimSuffix(p, "/")+"/"+string(wildAny), target)
}

// Under returns the deepest directory known statically to hold every path
// the write may affect (for "rm lib/*" or "> lib/$f.go", lib), or "" when
// even that is unknown (the path starts with an expansion, or ".." follows
// one). It takes an unresolved variable to stand for names below its
// directory, not for a climb out of it ("lib/$x" with x="../src/a" is
// outside it).
func (w Write) Under() string {
	p := w.pattern
	if p == "" {
		p = w.Path
	}
	i := strings.IndexAny(p, string(wildAny)+string(wildGlob))
	if i < 0 {
		return path.Dir(p)
	}
	j := strings.LastIndexByte(p[:i], '/')
	if j < 0 || p[0] != '/' {
		return ""
	}
	return path.Clean(p[:j+1])
}

// WritesTo returns the writes that may affect the file at target, an absolute
// clean path; see Write.Touches.
func (r Report) WritesTo(target string) []Write {
	var out []Write
	for _, w := range r.Writes {
		if w.Touches(target) {
			out = append(out, w)
		}
	}
	return out
}

// Program is one simple command that may run.
type Program struct {
	// Name is the program word as written (quotes removed), for example
	// "git" or "/usr/bin/rm".
	Name string
	// Args are the remaining words, quotes removed; unresolved expansions
	// keep their source form.
	Args []string
	// Dynamic is set when Name itself comes from an expansion, so the
	// program that runs is not known statically.
	Dynamic bool
	// Dirs are the working directories it may start in (after the
	// command's own cd's), absolute and clean; "" stands for one that is
	// not known statically.
	Dirs []string
}

// Base returns the program's file name without its directory, which is what
// allowlists and the write rules in this package key on.
func (p Program) Base() string {
	if p.Name == "" {
		return ""
	}
	return path.Base(p.Name)
}

// WriteKind says how a command writes a file.
type WriteKind uint8

// The write kinds. Append is the only kind that cannot destroy existing
// content, which matters for append-only files.
const (
	Redirect      WriteKind = iota + 1 // > >| &> <> >&file
	Append                             // >> &>> tee -a sponge -a
	Tee                                // tee FILE
	InPlace                            // sed -i, perl -i, yq -i, gofmt -w, editors, patch, …
	CopyTarget                         // cp, install, rsync destination
	MoveSource                         // mv / git mv source
	MoveTarget                         // mv / git mv destination
	Remove                             // rm, unlink, shred, rmdir, find -delete, git rm/clean, gzip
	Truncate                           // truncate
	Output                             // dd of=, sort -o, curl -o, tar -cf, sponge, …
	Touch                              // touch
	Link                               // ln destination
	Mkdir                              // mkdir, install -d
	Chmod                              // chmod, chown, chgrp
	GitRestore                         // git checkout/restore/reset --hard/stash
	Extract                            // tar -x, unzip
	ScriptRewrite                      // a file name in python/node/ruby/perl/awk code that writes
	GitIndex                           // git update-index, git add -f: the index entry of a file
	LinkSource                         // the file a new link (ln, cp -l/-s) points at: the link is an alias of it
)

// Reach says which files under a git write's path it can affect.
type Reach uint8

// The reaches. ReachAll is the zero value: every file.
const (
	ReachAll       Reach = iota
	ReachTracked         // only files in the index
	ReachUnignored       // files in the index and untracked files that are not ignored
)

var kindNames = [...]string{
	Redirect:      "redirect",
	Append:        "append",
	Tee:           "tee",
	InPlace:       "in-place edit",
	CopyTarget:    "copy target",
	MoveSource:    "move source",
	MoveTarget:    "move target",
	Remove:        "remove",
	Truncate:      "truncate",
	Output:        "output",
	Touch:         "touch",
	Link:          "link",
	Mkdir:         "mkdir",
	Chmod:         "chmod",
	GitRestore:    "git restore",
	Extract:       "extract",
	ScriptRewrite: "script write",
	GitIndex:      "git index",
	LinkSource:    "link source",
}

func (k WriteKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// Errors reported in Report.ParseError besides the parser's own.
var (
	ErrTooLarge   = errors.New("shellscan: command too large to analyse")
	ErrTooNested  = errors.New("shellscan: command nested too deeply to analyse")
	ErrTooComplex = errors.New("shellscan: command too complex to analyse fully")
	errInternal   = errors.New("shellscan: internal error")
)
