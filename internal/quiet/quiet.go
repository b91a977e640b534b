// Package quiet reads a hook's payload and, where the harness cannot be on
// for the call, ends the hook's process before the packages it links are
// initialised.
//
// A harness installed for a user runs its hooks in every project, most of
// which have no harness state: there each hook is a silent no-op, and its
// time is the start of its executable. The larger part of that start, past
// the Go runtime's, is the initialisation of the packages the hook links
// (unicode's tables, encoding/json, the shell parser's expressions: about
// a fifth of a do-nothing Go process, docs/perf.md). Go initialises the
// packages of a program in the order of their import paths, each once the
// packages it imports are done (the language specification's rule since
// Go 1.21), and this package imports nothing that links more than the
// runtime and the syscall package: its subpackages (switched, rooted,
// known), which a hook's main imports for their effect, run before the rest
// and end the process when the hook would have found no state root.
//
// Every answer is certain: the process ends only where every place the hook
// would look (root.Find's, integrity.Root's) was looked at by one system
// call that said "not there", or, for the hooks after a tool call (Known),
// where the state root the hook acts on keeps the judgement of the check
// after the last tool call that nothing was changed, and none of the files
// it rests on moved since (judged, integrity.AfterTool); and for the hooks
// that only settle a project switched off (Settled, Ended), where its
// record says so already and nothing is left for them to do. Anything
// else (a path given relative, an unreadable directory, a payload this
// reader cannot follow or one over peekLimit, on Linux no /proc, on macOS
// and the BSDs a link on the way to a place, Windows) leaves the decision
// to the hook, which then reads the payload
// Off has already read (Stdin). An early end writes its line in the hooks' debug
// log (Log, marked "quiet") as the hook would have.
package quiet

import (
	"syscall"
	"time"
)

// maxPayload bounds what is read from stdin (tool inputs carry whole files).
const maxPayload = 64 << 20

// stdinWait bounds how long a hook waits for stdin to close, so a hook run by
// hand or by a misbehaving parent cannot hang. What arrived by then is the
// payload (readStdin, per platform).
const stdinWait = 10 * time.Second

// peekLimit bounds what Off reads before it decides: a larger payload
// (a Write of a large file) is left to the hook, which reads the rest once
// it has switched the garbage collector off (internal/shortlived). Read
// here, the buffer's growth past a few megabytes would start a collection
// during initialisation, 2 ms for a payload of 1 MB.
const peekLimit = 256 << 10

// Stdin is the hook's payload: stdin read to its end, to maxPayload bytes,
// or for stdinWait from the first read, once per process (what Off read
// of it included).
func Stdin() []byte { return readStdin() }

// Rule is what a hook does where the harness is not on: the places it looks
// for a state root, and what it needs to find there to do anything.
type Rule int

const (
	// Switched: the hook does nothing unless the state root it finds is
	// switched on (.harness-active beside harness-tasks.json): PreToolUse
	// and the hooks of sessionhook.active.
	Switched Rule = iota
	// Rooted: the hook does nothing unless it finds a state root, on or
	// off (Stop, SessionStart, SessionEnd, UserPromptSubmit: a root whose
	// hooks are off still has its record settled).
	Rooted
	// Known: Rooted, or the record knows a project whose tasks file is gone
	// in a directory the hook looks at (integrity.Root: PostToolUse puts
	// back a tasks file `git clean` removed); in the state root found, a
	// judgement kept by the check after the last tool call still holds
	// (judged).
	Known
	// Settled: Rooted, and the state root found is switched off with its
	// record saying so already (settledOff): SessionStart and
	// UserPromptSubmit do nothing there but settle the record of a harness
	// just switched off (integrity.SettleOff).
	Settled
	// Ended: Rooted, and the state root found is switched off with
	// nothing for a turn's end to do (turnEnded): Stop's check would find
	// what the check after the last tool call found, and there is no
	// reflection round to ask for.
	Ended
)

// Names the probes look for, as internal/root and internal/record name them
// (a test holds them equal: this package imports neither).
const (
	tasksFile    = "harness-tasks.json"
	activeMarker = ".harness-active"
	markFile     = "mark.json"
	runtimeDir   = ".harness-runtime"
	judgedFile   = "judged.txt"
	logStampFile = "log-stamp.txt"
	progressFile = "harness-progress.txt"
	sessionsDir  = "sessions"
	// runtimePrefix begins the name of a session's runtime file in the
	// record's sessions directory (sessionhook.RuntimePath).
	runtimePrefix = "session-"
	// judgedFormat heads a judgement kept by integrity.AfterTool.
	judgedFormat = "harness judged 1"
	// maxParents bounds root.Find's look up a place's parents.
	maxParents = 64
)

// Off reads the payload (Stdin) and reports whether a hook following rule
// is certain to do nothing for it: no state root, or none switched on, in
// any place it would look.
func Off(rule Rule) bool {
	start := time.Now()
	doc, whole := peekStdin(peekLimit)
	if !whole {
		return false
	}
	env := func(key string) string {
		v, _ := syscall.Getenv(key)
		return v
	}
	if !off(rule, doc, env) {
		return false
	}
	if env("HARNESS_HOOK_LOG") != "" {
		field := func(name string) string {
			v, _ := member(doc, name)
			return v
		}
		Log(Entry{Event: field("hook_event_name"), SessionID: field("session_id"), Tool: field("tool_name"),
			Decision: "silent", Took: time.Since(start), Quiet: true})
	}
	return true
}

// The places a hook looks in for a state root, as given: $HARNESS_STATE_ROOT
// (that directory alone), $CLAUDE_PROJECT_DIR and the payload's cwd (each
// with its parents; a cwd that is not an absolute path is one the hook does
// not take), and the process's directory (the hook's last resort, taken
// here always). Off looks at them in that order, so that in a session,
// where $CLAUDE_PROJECT_DIR is the project, a project is found before the
// payload is read through for its cwd.

// envPlaces are the places the environment gives; ok is false when one is
// a relative path, which the hook would resolve against its working
// directory's name, not against what the kernel knows of it.
func envPlaces(env func(string) string) (stateRoot, projectDir string, ok bool) {
	stateRoot, projectDir = env("HARNESS_STATE_ROOT"), env("CLAUDE_PROJECT_DIR")
	for _, p := range []string{stateRoot, projectDir} {
		if p != "" && p[0] != '/' {
			return "", "", false
		}
	}
	return stateRoot, projectDir, true
}

// member returns the value of the top-level member name of the JSON object
// doc, "" when it has none or its value is not a string, and whether that
// answer is certain. It is not when doc does not begin as an object, when
// it cannot be followed to the member's end, when a key or the value holds
// an escape, or when name appears twice: the hook's own reader might then
// see another value. A document the hook finds malformed has no member for
// it at all, so this reader need not judge validity past the member.
func member(doc []byte, name string) (value string, certain bool) {
	raw, certain := memberText(doc, name)
	if !certain || len(raw) == 0 || raw[0] != '"' {
		return "", certain
	}
	v, _, plain := str(raw, 0)
	if !plain {
		return "", false
	}
	return v, true
}

// memberText is member's walk: the text of the value of the top-level
// member name (nil when there is none), and whether that answer is
// certain.
func memberText(doc []byte, name string) (raw []byte, certain bool) {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil, false
	}
	i++
	found := false
	for {
		i = skipSpace(doc, i)
		if i >= len(doc) {
			return nil, false
		}
		if doc[i] == '}' {
			return raw, true
		}
		if doc[i] == ',' {
			i = skipSpace(doc, i+1)
		}
		key, end, plain := str(doc, i)
		if end < 0 || !plain {
			return nil, false
		}
		i = skipSpace(doc, end)
		if i >= len(doc) || doc[i] != ':' {
			return nil, false
		}
		i = skipSpace(doc, i+1)
		start := i
		if i = skipValue(doc, i); i < 0 {
			return nil, false
		}
		if key == name {
			if found {
				return nil, false
			}
			found, raw = true, doc[start:i]
		}
	}
}

func skipSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// str reads the string at doc[i] (a quote), returning its text, the index
// past its closing quote (-1 when it has none) and whether it holds no
// escape (its text is then the string's value).
func str(doc []byte, i int) (s string, end int, plain bool) {
	if i >= len(doc) || doc[i] != '"' {
		return "", -1, false
	}
	plain = true
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			plain = false
			j++
		case '"':
			return string(doc[i+1 : j]), j + 1, plain
		}
	}
	return "", -1, false
}

// skipValue returns the index past the JSON value at doc[i], -1 when it
// does not end: a string, an object or array (strings in them skipped
// whole), or a scalar up to the next delimiter.
func skipValue(doc []byte, i int) int {
	if i >= len(doc) {
		return -1
	}
	switch doc[i] {
	case '"':
		_, end, _ := str(doc, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(doc); j++ {
			switch doc[j] {
			case '"':
				_, end, _ := str(doc, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(doc) && doc[j] != ',' && doc[j] != '}' && doc[j] != ']' && doc[j] != ' ' && doc[j] != '\t' && doc[j] != '\n' && doc[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
