// Package integrity checks the harness's files in a project against the
// record of what the harness itself last wrote (internal/record) and puts
// back what something else changed: the tasks file, the .harness-active
// marker, and the progress log's lines.
//
// The guard before a tool call can only predict what a command will write;
// this check knows. It runs after every tool call (the PostToolUse hook),
// at the start of the other hooks and of every harness verb, and around
// every command the harness runs itself (validation, cleanup), so a change
// the harness did not make is undone before anything builds on it.
//
// The check is cheap when nothing changed: a stat of the tasks file and of
// the log, and a read of the record's small mark; file contents are read
// only when a size or a modification time moved.
package integrity

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// Adopt judges a change to the tasks file that the guard allowed before it
// happened (a hand edit through the Edit or Write tool): it returns "" to
// adopt after as the new state, else why it is refused.
type Adopt func(before, after []byte) string

// Repair is one file put back.
type Repair struct {
	File string // the harness file's name
	What string // what happened to it, in a phrase
	Kept string // where the changed copy is kept, "" when there was none
}

// Result is what a check found and did.
type Result struct {
	Repairs []Repair
	Adopted bool // a hand edit of the tasks file was adopted
}

// Files names the files put back and what happened to them, in one line.
func (r Result) Files() string {
	var parts []string
	for _, rp := range r.Repairs {
		parts = append(parts, rp.File+" "+rp.What)
	}
	return strings.Join(parts, ", ")
}

// Tampered reports whether the check put anything back.
func (r Result) Tampered() bool { return len(r.Repairs) > 0 }

// Message tells the model what was put back and what to do instead.
func (r Result) Message() string {
	if !r.Tampered() {
		return ""
	}
	var b strings.Builder
	b.WriteString("HARNESS TAMPER: harness files were changed outside the harness and have been put back as the harness last wrote them:\n")
	for _, rp := range r.Repairs {
		fmt.Fprintf(&b, "- %s %s", rp.File, rp.What)
		if rp.Kept != "" {
			fmt.Fprintf(&b, " (the changed copy is kept as %s)", rp.Kept)
		}
		b.WriteString("\n")
	}
	b.WriteString("Change the state only with the harness command: `harness claim`, `harness checkpoint ID M/N \"…\"`, `harness validate ID` (the only way a task completes), `harness fail ID --category C MSG`; `harness status` shows it.")
	return b.String()
}

// Check compares the harness files in the state root dir with the record
// and repairs what differs. by names what ran (a tool call, a command) for
// the TAMPER lines; adopt, when not nil, may accept a change to the tasks
// file. A project without a record has nothing to compare and is left
// alone.
func Check(dir, by string, adopt Adopt) Result { return check(dir, by, adopt, false) }

// CheckVerb is Check for a harness verb (and the commands it fences). Inside
// Claude Code's sandbox (harness install --sandbox) the record is read-only
// to the verb: it could not record its own writes, so it cannot tell them
// from anyone else's, and putting "back" the record's copy would undo what
// the verb before it in the same command wrote. There it leaves the
// judging to the hook after the tool call, which runs outside the sandbox
// and judges the whole call against the record. The hooks always judge:
// a record made read-only by other means (chattr +i) never turns them off.
func CheckVerb(dir, by string) Result { return check(dir, by, nil, true) }

func check(dir, by string, adopt Adopt, verb bool) Result {
	m, ok := record.ReadMark(dir)
	if !ok || m.Root != dir {
		return Result{}
	}
	if clean(dir, m) {
		return Result{}
	}
	if verb && record.ReadOnly(dir) {
		return Result{}
	}
	// Something moved: look again under the transaction lock, which every
	// writer of the tasks file holds, so a verb half-way through its write
	// is never taken for a tamper.
	unlock, err := lock.Tx(dir)
	if err != nil {
		return Result{}
	}
	defer unlock()
	if m, ok = record.ReadMark(dir); !ok {
		return Result{}
	}
	var res Result
	res.tasks(dir, m, by, adopt)
	res.marker(dir, m)
	res.initScript(dir, m)
	res.log(dir)
	if res.Tampered() {
		var entries []progress.Entry
		n := progress.LastSession(dir)
		for _, rp := range res.Repairs {
			msg := fmt.Sprintf("%s %s by %s; restored what the harness last wrote", rp.File, rp.What, by)
			if rp.Kept != "" {
				msg += "; changed copy kept as " + rp.Kept
			}
			entries = append(entries, progress.Entry{Session: n, Type: progress.Tamper, Message: msg})
		}
		progress.Append(dir, entries...)
	}
	return res
}

// clean is the fast path: the tasks file has the mark the harness left,
// the marker is where the record says, and the log still begins with the
// harness's own lines.
func clean(dir string, m record.Mark) bool {
	fi, err := os.Stat(state.Path(dir))
	if err != nil || fi.Size() != m.Size || fi.ModTime().UnixNano() != m.ModNs {
		return false
	}
	if m.Active && !root.Active(dir) {
		return false
	}
	if m.Init {
		fi, err := os.Stat(filepath.Join(dir, record.InitCopy))
		if err != nil || fi.Size() != m.InitSize || fi.ModTime().UnixNano() != m.InitModNs {
			return false
		}
	}
	return logWhole(dir)
}

// logTail is how much of the harness's own lines logWhole compares: the
// lines an agent is likely to rewrite are the recent ones, and reading a
// bounded tail keeps the check cheap on a long log.
const logTail = 4 << 10

// logWhole reports whether the log still begins with the harness's mirror
// of it: at least as long (lines appended by others are allowed) and, over
// the last logTail bytes the harness wrote, byte for byte the same (a
// rewrite of earlier lines is not).
func logWhole(dir string) bool {
	mf, err := os.Open(filepath.Join(record.Dir(dir), record.LogMirror))
	if err != nil {
		return true // no mirror: nothing to compare
	}
	defer mf.Close()
	mi, err := mf.Stat()
	if err != nil {
		return true
	}
	lf, err := os.Open(progress.Path(dir))
	if err != nil {
		return false
	}
	defer lf.Close()
	li, err := lf.Stat()
	if err != nil || li.Size() < mi.Size() {
		return false
	}
	n := min(mi.Size(), logTail)
	want, got := make([]byte, n), make([]byte, n)
	if _, err := mf.ReadAt(want, mi.Size()-n); err != nil {
		return true // the mirror cannot be read: nothing to compare
	}
	if _, err := lf.ReadAt(got, mi.Size()-n); err != nil {
		return false
	}
	return bytes.Equal(want, got)
}

func (r *Result) tasks(dir string, m record.Mark, by string, adopt Adopt) {
	live := state.Path(dir)
	fi, statErr := os.Stat(live)
	if statErr == nil && fi.Size() == m.Size && fi.ModTime().UnixNano() == m.ModNs {
		return
	}
	if statErr == nil && record.SameTasks(dir) {
		// Same bytes, new stat: nothing was changed. The record's mark
		// and the hooks' summary follow the file.
		statecache.Retouched(dir, m, fi)
		return
	}
	want, err := os.ReadFile(filepath.Join(record.Dir(dir), record.TasksCopy))
	if err != nil {
		return
	}
	got, readErr := os.ReadFile(live)
	what := "was deleted"
	if readErr == nil {
		what = "was changed"
		if adopt != nil {
			if why := adopt(want, got); why == "" {
				record.SaveTasks(dir, got, root.Active(dir))
				r.Adopted = true
				return
			} else {
				what = "was changed (" + why + ")"
			}
		}
	}
	kept := keep(dir, state.FileName, got, readErr == nil)
	if err := state.Restore(dir, want); err != nil {
		return
	}
	r.Repairs = append(r.Repairs, Repair{File: state.FileName, What: what, Kept: kept})
}

func (r *Result) marker(dir string, m record.Mark) {
	if !m.Active || root.Active(dir) {
		return
	}
	if os.WriteFile(filepath.Join(dir, root.ActiveMarker), nil, 0o644) == nil {
		// Putting the tasks file back just recorded the hooks as off (the
		// marker was gone then): they are on.
		record.SetActive(dir, true)
		r.Repairs = append(r.Repairs, Repair{File: root.ActiveMarker, What: "was removed while the harness is on"})
	}
}

// initScript puts back harness-init.sh as the session started with it:
// SessionStart runs it outside every guard, so a change made during a
// session would run unseen at the next one. The user changes it between
// sessions (the next session start records it).
func (r *Result) initScript(dir string, m record.Mark) {
	if !m.Init {
		return
	}
	live := filepath.Join(dir, record.InitCopy)
	fi, statErr := os.Stat(live)
	if statErr == nil && fi.Size() == m.InitSize && fi.ModTime().UnixNano() == m.InitModNs {
		return
	}
	want, err := os.ReadFile(filepath.Join(record.Dir(dir), record.InitCopy))
	if err != nil {
		return
	}
	got, readErr := os.ReadFile(live)
	if readErr == nil && bytes.Equal(got, want) {
		record.TouchInit(dir, fi)
		return
	}
	what := "was deleted"
	if readErr == nil {
		what = "was changed during the session (it is the user's, changed between sessions)"
	}
	kept := keep(dir, record.InitCopy, got, readErr == nil)
	if atomicfile.Replace(live, want, 0o755) != nil {
		return
	}
	os.Chmod(live, 0o755)
	if fi, err := os.Stat(live); err == nil {
		record.TouchInit(dir, fi)
	}
	r.Repairs = append(r.Repairs, Repair{File: record.InitCopy, What: what, Kept: kept})
}

func (r *Result) log(dir string) {
	if logWhole(dir) {
		return
	}
	mirror, err := os.ReadFile(filepath.Join(record.Dir(dir), record.LogMirror))
	if err != nil {
		return
	}
	got, readErr := os.ReadFile(progress.Path(dir))
	what := "was deleted"
	if readErr == nil {
		what = "was truncated"
		if len(got) >= len(mirror) {
			what = "had lines the harness wrote rewritten"
		}
	}
	kept := keep(dir, progress.FileName, got, readErr == nil && len(got) > 0)
	if atomicfile.Replace(progress.Path(dir), mirror, 0o644) == nil {
		r.Repairs = append(r.Repairs, Repair{File: progress.FileName, What: what, Kept: kept})
	}
}

// TamperedDir is where changed copies are kept, in the runtime directory
// (a harness file: never committed, never rolled back).
const TamperedDir = ".harness-runtime/tampered"

// keep saves the changed copy of a harness file for the user and returns
// its path relative to the state root, "" when there is nothing to keep.
func keep(dir, name string, data []byte, exists bool) string {
	if !exists {
		return ""
	}
	rel := filepath.Join(TamperedDir, fmt.Sprintf("%s.%s", name, time.Now().UTC().Format("20060102T150405.000000000Z")))
	path := filepath.Join(dir, rel)
	if os.MkdirAll(filepath.Dir(path), 0o755) != nil || os.WriteFile(path, data, 0o644) != nil {
		return ""
	}
	return rel
}

// Root returns the state root for cwd, as root.Find does, and also when the
// tasks file is gone (`git clean -fdx`, `rm`) but the record knows a
// project there or above whose hooks were on.
func Root(cwd string) string {
	if dir := root.Find(cwd); dir != "" {
		return dir
	}
	for _, start := range []string{os.Getenv("CLAUDE_PROJECT_DIR"), cwd} {
		if start == "" {
			continue
		}
		dir, err := filepath.EvalSymlinks(start)
		if err != nil {
			continue
		}
		for i := 0; i < 64; i++ {
			if m, ok := record.ReadMark(dir); ok && m.Root == dir && m.Active {
				return dir
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return ""
}

// Settle brings the record in line with the files before the harness runs
// a command whose changes it will then check (a validation, a cleanup):
// what is there now was made before the command, so the command is not
// blamed for it. Inside a Claude Code session a change made outside the
// harness is put back, as at every hook; a person's own run (no session)
// adopts the tasks file as they left it, as their next verb's write would.
func Settle(dir string) Result {
	if InSession() {
		return CheckVerb(dir, "a writer outside the harness")
	}
	return Check(dir, "a person", func(_, after []byte) string {
		if _, err := state.Parse(after, state.Path(dir)); err != nil {
			return err.Error()
		}
		return ""
	})
}

// InSession reports whether the process runs inside a Claude Code session
// (an agent's Bash tool, or a hook): Claude Code sets CLAUDE_CODE_SESSION_ID
// for both.
func InSession() bool { return os.Getenv("CLAUDE_CODE_SESSION_ID") != "" }
