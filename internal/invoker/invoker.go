// Package invoker tells who runs this process: an agent inside a Claude
// Code session, or a person; and whether a person can be typing (standard
// input is a terminal).
//
// Some harness verbs are a person's decision (adopt, cancel, remove, …).
// One environment variable cannot tell: an agent drops it with `env -u`.
// So a process is inside a session when its own environment says so, or
// when any of its ancestors is a Claude Code process, carries a session in
// its environment, or holds the session lock. Claude Code starts every
// command of an agent (its Bash tool, a hook) as its own descendant, and a
// process cannot change its ancestors' environments.
//
// The walk reads /proc on Linux and sysctl on macOS; elsewhere only the
// process's own environment is read. A process that leaves the tree (a
// double fork, reparented to init) escapes the walk: what the walk saw is
// kept in Invoker so that the caller can log it, and such an escape shows.
package invoker

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Proc is what the walk reads of one process.
type Proc struct {
	PID, PPID int
	Comm      string   // the kernel's short name of the program
	Args      []string // its command line; nil when unreadable
	Env       []string // its environment at start; nil when unreadable
}

// Tree reads a process by its id.
type Tree interface {
	Proc(pid int) (Proc, error)
}

// Invoker is who runs this process, as far as the walk could see.
type Invoker struct {
	PID int
	// Session says why the process is taken to run inside a Claude Code
	// session, in a phrase ("" when nothing says so).
	Session string
	// Parent is the parent process as the walk found it (its PID is 0 when
	// it could not be read): a parent pid 1 is a process that left its tree.
	Parent Proc
	// Limit says what the walk could not look at ("" when it reached the
	// top of the tree).
	Limit string
	// Terminal reports whether standard input is a terminal; TTY is its
	// name where the system tells it.
	Terminal bool
	TTY      string
}

// InSession reports whether the process is taken to run inside a Claude
// Code session.
func (i Invoker) InSession() bool { return i.Session != "" }

// How says how the process was invoked, for the log: "by a terminal (pid
// 1234, tty /dev/pts/3)", or "without a terminal (--yes), no Claude Code
// ancestor (pid 1234, parent 77 cron)". note, when not "", follows "without
// a terminal" in parentheses (the flag that allowed it).
func (i Invoker) How(note string) string {
	var b strings.Builder
	if i.Terminal {
		b.WriteString("by a terminal (pid " + strconv.Itoa(i.PID))
		if i.TTY != "" {
			b.WriteString(", tty " + i.TTY)
		}
		b.WriteString(")")
	} else {
		b.WriteString("without a terminal")
		if note != "" {
			b.WriteString(" (" + note + ")")
		}
	}
	if i.Session != "" {
		b.WriteString(", inside a Claude Code session: " + i.Session)
	} else {
		b.WriteString(", no Claude Code ancestor")
	}
	if !i.Terminal {
		fmt.Fprintf(&b, " (pid %d, parent %s)", i.PID, describe(i.Parent))
	}
	if i.Limit != "" {
		b.WriteString("; " + i.Limit)
	}
	return b.String()
}

// describe names a process for the log: "77 cron", or "unknown".
func describe(p Proc) string {
	if p.PID == 0 {
		return "unknown"
	}
	if p.Comm == "" {
		return strconv.Itoa(p.PID)
	}
	return strconv.Itoa(p.PID) + " " + p.Comm
}

// Options tune the walk.
type Options struct {
	// Holders are the pids holding the project's session lock: an
	// ancestor among them is the session itself (a shell agent that took
	// the lock by hand has no Claude Code process). Pids below 2 are
	// ignored (init adopts orphans).
	Holders []int
	// Stop is a process the walk neither looks at nor goes above; 0 for
	// none. Only a test binary sets it (Boundary): its own ancestry may be
	// a Claude Code session that is not the scenario's.
	Stop int
}

// Boundary is the Stop of every Detect in this process. The harness never
// sets it; a test binary sets it to the test runner's pid, so that a
// scenario run by an agent (`go test` in a Claude Code session) sees only
// its own processes.
var Boundary int

// MaxDepth bounds the walk. A deeper chain is taken as a session: an agent
// could nest shells past any bound to hide its Claude Code process.
const MaxDepth = 256

// Timeout bounds the walk: a process tree that cannot be read in this time
// is taken as a session (the safe answer), never waited for.
const Timeout = 2 * time.Second

// Detect finds who runs this process. It reads the process's own
// environment, walks its ancestors where the system allows, and asks
// whether standard input is a terminal.
func Detect(o Options) Invoker {
	if o.Stop == 0 {
		o.Stop = Boundary
	}
	inv := Invoker{PID: os.Getpid()}
	inv.Terminal, inv.TTY = terminal(os.Stdin)
	if v := carries(os.Environ()); v != "" {
		inv.Session = "its environment has " + v
		return inv // no need to look further (an agent's usual case)
	}
	tree, limit := system()
	if tree == nil {
		inv.Limit = limit
		return inv
	}
	done := make(chan Invoker, 1)
	go func() {
		w := Walk(tree, os.Getppid(), o)
		done <- w
	}()
	select {
	case w := <-done:
		inv.Session, inv.Parent, inv.Limit = w.Session, w.Parent, w.Limit
	case <-time.After(Timeout):
		inv.Session = fmt.Sprintf("its process tree could not be read within %s", Timeout)
	}
	return inv
}

// Walk looks for a Claude Code session among the ancestors of a process
// whose parent is ppid, in tree. It fills Session, Parent and Limit.
func Walk(tree Tree, ppid int, o Options) Invoker {
	var inv Invoker
	pid := ppid
	for depth := 0; ; depth++ {
		if pid <= 0 {
			return inv // the top of the tree
		}
		if o.Stop != 0 && pid == o.Stop {
			if depth == 0 {
				inv.Parent, _ = tree.Proc(pid) // named in the log, not judged
			}
			return inv
		}
		if depth == MaxDepth {
			inv.Session = fmt.Sprintf("more than %d ancestors: the walk stopped before the top", MaxDepth)
			return inv
		}
		p, err := tree.Proc(pid)
		if err != nil {
			inv.Limit = fmt.Sprintf("ancestor %d could not be read", pid)
			return inv
		}
		if depth == 0 {
			inv.Parent = p
		}
		if why := session(p, o.Holders); why != "" {
			inv.Session = "ancestor " + describe(p) + " " + why
			return inv
		}
		if pid == 1 {
			return inv
		}
		pid = p.PPID
	}
}

// session says why p is a session's process, "" when it is not.
func session(p Proc, holders []int) string {
	if claude(p) {
		return "is Claude Code"
	}
	if v := carries(p.Env); v != "" {
		return "has " + v
	}
	for _, h := range holders {
		if h > 1 && h == p.PID {
			return "holds the session lock"
		}
	}
	return ""
}

// carries names the variable of env that Claude Code sets for the
// commands it runs (CLAUDE_CODE_SESSION_ID, CLAUDECODE=1, CLAUDE_PID),
// "" when none is there.
func carries(env []string) string {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "CLAUDE_CODE_SESSION_ID" && strings.TrimSpace(v) != "":
			return k
		case k == "CLAUDECODE" && v == "1":
			return "CLAUDECODE=1"
		case k == "CLAUDE_PID" && strings.TrimSpace(v) != "":
			return k
		}
	}
	return ""
}

// claude reports whether p is a Claude Code process: the native `claude`
// executable (as installed by npm, claude.exe, or by the native installer,
// .../claude/versions/X.Y.Z), or node running @anthropic-ai/claude-code.
func claude(p Proc) bool {
	if p.Comm == "claude" || p.Comm == "claude.exe" {
		return true
	}
	for i, a := range p.Args {
		if i > 1 {
			break
		}
		a = filepath.ToSlash(a)
		if i == 0 {
			if base := path.Base(a); base == "claude" || base == "claude.exe" || strings.Contains(a, "/claude/versions/") {
				return true
			}
		}
		if strings.Contains(a, "@anthropic-ai/claude-code/") {
			return true
		}
	}
	return false
}
