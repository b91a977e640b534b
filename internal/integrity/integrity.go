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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
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
	// SwitchedOff: the marker was removed outside the live session (a
	// person, between sessions), and the record now has the harness off.
	SwitchedOff bool
	// Unlocked says why the judgement went without the transaction lock
	// (see judgeLock), "" when it held it.
	Unlocked string

	// mark is what the steps found the mark must now say (a session saw
	// the marker, the hooks on or off, harness-init.sh's new stamp):
	// written once, when every step has run.
	mark record.Change
	// restored: the tasks file was put back, its backup with it.
	restored bool
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
func Check(p *project.Project, by string, adopt Adopt) Result { return check(p, by, adopt, how{}) }

// Opening is Check at a new session's start, before the session builds on
// the files: harness-init.sh is left alone, for the script as a new
// session finds it is the user's (changed between sessions), and the
// session records it once it may work (a session locked out by a live one
// must not record that one's script). The session's first look at the
// marker is its first tool call's to record.
func Opening(p *project.Project, by string, adopt Adopt) Result {
	return check(p, by, adopt, how{opening: true})
}

// Fence is Check right after a command the harness ran itself (a
// validation, a cleanup, harness-init.sh, the verification gate): when the
// marker was in place before the command (markerBefore), its removal is
// the command's doing and is put back, whoever runs the harness. Inside
// Claude Code's sandbox, where a verb cannot write the record, the record
// lags behind the verbs of the same command line: their legal writes are
// kept (Legal), and the hooks judge the whole call afterwards.
func Fence(p *project.Project, by string, markerBefore bool) Result {
	return check(p, by, sandboxed(p), how{fenced: markerBefore})
}

// sandboxed is Legal(p) where this process cannot write the record (a
// verb inside Claude Code's sandbox); elsewhere nothing may change. The
// record's writability is probed only when a change was found.
func sandboxed(p *project.Project) Adopt {
	return func(before, after []byte) string {
		if p.Record().Writable() {
			return refused
		}
		return Legal(p)(before, after)
	}
}

// refused is an Adopt's answer for a change it does not judge at all: the
// file is put back, saying only that it was changed.
const refused = "\x00"

// how is what a check may take for granted.
type how struct {
	fenced bool // the marker was in place before the command the harness ran (Fence)
	// opening: a new session's start (Opening). harness-init.sh is not
	// judged, and the session's first look at the marker is left to its
	// first tool call's check (a start with nothing else changed costs
	// the stats alone).
	opening bool
	// keep: a clean check keeps its judgement for the next PostToolUse
	// (AfterTool).
	keep bool
}

// check is one look at the harness files, a judgement of what it found
// against the record, the repairs, and one line of the log for each:
// look, then (only when something moved) look again under the lock, judge
// each file, write the mark once, log once.
func check(p *project.Project, by string, adopt Adopt, h how) Result {
	var judged string
	if h.keep {
		// The stats first, then the mark read afresh: whatever moves after
		// them makes the judgement kept from them stale.
		judged = judgedText(p)
		p.Reread()
	}
	m, ok := p.Mark()
	if !ok || m.Root != p.Root {
		return Result{}
	}
	rec := p.Record()
	if look(p.Root, rec, m).clean(m, h) {
		keepJudged(p, judged)
		return Result{}
	}
	// Something moved: look again under the transaction lock, which every
	// writer of the tasks file holds, so a verb half-way through its write
	// is never taken for a tamper.
	var res Result
	unlock := judgeLock(p.Root, &res)
	defer unlock()
	p.Reread()
	if m, ok = p.Mark(); !ok {
		return Result{}
	}
	s := look(p.Root, rec, m)
	res.tasks(p, rec, m, s, by, adopt)
	res.backup(p, rec, s)
	res.marker(p.Root, m, s, h.fenced)
	res.pause(p.Root, m, s)
	if !h.opening {
		res.initScript(p.Root, rec, m, s)
	}
	if !s.logWhole {
		res.repairLog(p.Root, rec)
	}
	rec.Note(res.mark)
	res.logRepairs(p.Root, by)
	return res
}

// judgeWait bounds a judgement's wait for the transaction lock held by
// anything but the harness. A verb holds it for milliseconds (a save) or
// for a fetch (state.Sync), and is waited for longer (harnessWait):
// judging its write in flight would take a completion it has not
// recorded yet for a forgery. Another holder, the agent's own
// `flock … sleep` among them (an flock needs only a file it can open; in
// Claude Code's sandbox a command's background processes end with it),
// must not keep the judge from judging: waiting
// TxTimeout, a check gave up silently and left a forged completion in
// place, and a PreToolUse or PostToolUse hook outlived Claude Code's 30 s
// limit on it, which then let the tool call through. Where the system
// does not say who holds a lock (lock.HeldByHarness: Linux only), every
// holder is waited for judgeWait alone.
var judgeWait = 2 * time.Second

// harnessWait bounds the wait for a harness process's transaction below
// Claude Code's 30 s limit on PreToolUse and PostToolUse: where a verb
// held the lock longer still, the hook answers, judging without it,
// rather than being killed (which lets a PreToolUse's tool call through).
var harnessWait = 20 * time.Second

// judgeLock takes root's transaction lock for a judgement and returns its
// release: it waits up to judgeWait (or a lower lock.TxTimeout, which
// SessionEnd sets to end within its budget), and on up to harnessWait (or
// TxTimeout, the lower) while a harness process holds the lock. Where the
// lock cannot be had (held past the wait, or its file unusable) the
// judgement goes on without it, res.Unlocked saying why.
func judgeLock(root string, res *Result) (unlock func()) {
	path := lock.TxPath(root)
	wait := min(judgeWait, lock.TxTimeout)
	unlock, err := lock.File(path, wait)
	if err != nil && lock.HeldByHarness(path) {
		if more := min(harnessWait, lock.TxTimeout) - wait; more > 0 {
			unlock, err = lock.File(path, more)
		}
	}
	if err != nil {
		res.Unlocked = err.Error()
		return func() {}
	}
	return unlock
}

// seen is the harness files as one look finds them: a stat of each, and
// whether the log still begins with the harness's own lines. Every step of
// a check judges these facts; none stats a file again.
type seen struct {
	tasks    os.FileInfo // the tasks file; nil when it cannot be stat'ed
	backup   int64       // the backup's size; -1 when it cannot be stat'ed
	active   bool        // .harness-active is in place
	paused   bool        // the pause file is there
	init     os.FileInfo // harness-init.sh when the record keeps it; nil otherwise or when gone
	logWhole bool        // the log begins with the record's mirror (logWhole)
}

// look takes the facts a check judges, for the record's mark m.
func look(dir string, rec record.Record, m record.Mark) seen {
	s := seen{backup: -1}
	if fi, err := os.Stat(state.Path(dir)); err == nil {
		s.tasks = fi
	}
	if bi, err := os.Stat(state.BackupPath(dir)); err == nil {
		s.backup = bi.Size()
	}
	s.active, s.paused = root.Active(dir), root.Paused(dir)
	if m.Init {
		if fi, err := os.Stat(filepath.Join(dir, record.InitCopy)); err == nil {
			s.init = fi
		}
	}
	s.logWhole = logWhole(dir, rec)
	return s
}

// clean is the fast path: the tasks file has the mark the harness left,
// its backup the size, the marker and the pause are where the record says,
// harness-init.sh is the one recorded, and the log still begins with the
// harness's own lines.
func (s seen) clean(m record.Mark, h how) bool {
	switch {
	case !s.tasksMarked(m),
		m.Active && !s.active,
		s.backup != m.Size,
		record.Trusted() && m.Active && hookSession() != "" && !m.SawMarker(hookSession()) && !h.opening,
		// (this session's first look at the marker: record it)
		s.paused != (m.Paused != ""),
		m.Init && (s.init == nil || record.StampOf(s.init) != m.InitStamp()):
		return false
	}
	return s.logWhole
}

// tasksMarked reports whether the tasks file has the stamp of m.
func (s seen) tasksMarked(m record.Mark) bool {
	return s.tasks != nil && record.StampOf(s.tasks) == m.Tasks()
}

// logRepairs logs one TAMPER line per file put back, naming by, after the
// line of a switching off when the check found one.
func (r Result) logRepairs(dir, by string) {
	if !r.Tampered() && !r.SwitchedOff {
		return
	}
	var entries []progress.Entry
	n := progress.LastSession(dir)
	if r.SwitchedOff {
		entries = append(entries, switchedOff(n))
	}
	if r.Unlocked != "" {
		entries = append(entries, progress.Entry{Session: n, Type: progress.Warn,
			Message: "the check after " + by + " judged without the transaction lock: " + r.Unlocked})
	}
	for _, rp := range r.Repairs {
		msg := fmt.Sprintf("%s %s by %s; restored what the harness last wrote", rp.File, rp.What, by)
		if rp.Kept != "" {
			msg += "; changed copy kept as " + rp.Kept
		}
		entries = append(entries, progress.Entry{Session: n, Type: progress.Tamper, Message: msg})
	}
	progress.Append(dir, entries...)
}

// switchedOff is the log line of a harness switched off by a person: the
// marker removed outside a running session.
func switchedOff(session int) progress.Entry {
	return progress.Entry{Session: session, Type: progress.Init,
		Message: "Harness switched off: .harness-active was removed outside a running session"}
}

// SettleOff records that the hooks of p are off, for a session or a turn
// that begins without .harness-active: whoever removed it did so before
// the turn's first tool call (a person, `harness cancel`), so the check
// after each tool call must not put it back. The first to find the record
// still on logs the switching off, as the check does when it comes first.
func SettleOff(p *project.Project) {
	m, ok := p.Mark()
	if !ok || !m.Active {
		return // off already, or no record: nothing to settle (SetActive would read the mark again to find so)
	}
	p.Record().SetActive(false)
	if m.Root == p.Root {
		progress.Append(p.Root, switchedOff(progress.LastSession(p.Root)))
	}
}

// logTail is how much of the harness's own lines logWhole compares: the
// lines an agent is likely to rewrite are the recent ones, and reading a
// bounded tail keeps the check cheap on a long log.
const logTail = 4 << 10

// logWhole reports whether the log of the state root dir still begins
// with the harness's mirror of it in rec: at least as long (lines
// appended by others are allowed) and, over the last logTail bytes the
// harness wrote, byte for byte the same (a rewrite of earlier lines is
// not).
func logWhole(dir string, rec record.Record) bool {
	want, mirrored, err := safefile.ReadPart(rec.Path(record.LogMirror), func(size int64) (int64, int64) {
		n := min(size, logTail)
		return size - n, n
	})
	if err != nil {
		return true // no mirror (or one that cannot be read): nothing to compare
	}
	got, size, err := safefile.ReadPart(progress.Path(dir), func(size int64) (int64, int64) {
		if size < mirrored {
			return -1, 0 // shorter than the mirror: no need to read it
		}
		return mirrored - int64(len(want)), int64(len(want))
	})
	return err == nil && size >= mirrored && bytes.Equal(want, got)
}

// tasks judges the tasks file: the same bytes under a new stat are
// followed; a change adopt accepts is recorded as the harness's; anything
// else is put back from the record's copy (with its backup), the changed
// copy kept.
func (r *Result) tasks(p *project.Project, rec record.Record, m record.Mark, s seen, by string, adopt Adopt) {
	dir := p.Root
	if s.tasksMarked(m) {
		return
	}
	if s.tasks != nil && rec.SameTasks() {
		// Same bytes, new stat: nothing was changed. The record's mark
		// and the hooks' summary follow the file.
		statecache.Retouched(dir, m, s.tasks)
		return
	}
	want, err := safefile.ReadFile(rec.Path(record.TasksCopy), state.MaxFileSize)
	if err != nil {
		return
	}
	got, readErr := safefile.ReadFile(state.Path(dir), state.MaxFileSize)
	what := gone(readErr)
	if readErr == nil {
		what = "was changed"
		if adopt != nil {
			switch why := adopt(want, got); why {
			case "":
				rec.SaveTasks(got, s.active)
				r.Adopted = true
				return
			case refused:
			default:
				what = "was changed (" + why + ")"
			}
		}
	}
	kept := keep(dir, state.FileName, got, readErr == nil)
	if err := state.Restore(dir, want); err != nil {
		return
	}
	r.restored = true
	r.Repairs = append(r.Repairs, Repair{File: state.FileName, What: what, Kept: kept})
}

// backup puts harness-tasks.json.bak back from the record when it is gone
// or no longer the size of the file the harness last wrote (a backup is
// always a copy of it): the restore of a corrupt tasks file reads it.
// Runs after tasks: a tasks file put back has its backup written with it,
// and an adopted one changes the size the backup must have.
func (r *Result) backup(p *project.Project, rec record.Record, s seen) {
	if r.restored {
		return
	}
	m, ok := p.Mark() // as tasks left it
	if !ok || s.backup == m.Size {
		return
	}
	want, ok := rec.TasksText()
	if !ok || int64(len(want)) != m.Size {
		return
	}
	if atomicfile.Replace(state.BackupPath(p.Root), want, 0o644) == nil && !r.Adopted {
		// (An adopted change is the harness's now: its backup follows.)
		r.Repairs = append(r.Repairs, Repair{File: state.BackupName, What: "was removed or changed"})
	}
}

// marker follows the protocol: without .harness-active the harness does
// nothing, and a person switches it off by removing the marker between
// sessions. A removal is put back only when it is a live session's own
// doing: a hook of this session saw the marker in place before (the
// record's Sessions). Only a hook, trusted code the agent cannot run in
// its stead, decides that a removal was a person's; a verb leaves a
// missing marker it cannot attribute to the next hook.
func (r *Result) marker(dir string, m record.Mark, s seen, fenced bool) {
	if !m.Active {
		return
	}
	sid := hookSession()
	if s.active {
		if sid != "" && record.Trusted() {
			r.mark.Session = sid
		}
		return
	}
	if !fenced && (sid == "" || !m.SawMarker(sid)) {
		if record.Trusted() {
			r.mark.Active = new(false)
			r.SwitchedOff = true
		}
		return
	}
	if os.WriteFile(filepath.Join(dir, root.ActiveMarker), nil, 0o644) == nil {
		// Putting the tasks file back just recorded the hooks as off (the
		// marker was gone then): they are on.
		r.mark.Active = new(true)
		r.Repairs = append(r.Repairs, Repair{File: root.ActiveMarker, What: "was removed while the harness is on"})
	}
}

// pause holds the runtime directory's pause file to the record: a pause
// only a person makes (`harness pause`, which records it), so a pause file
// the record does not know is removed, and a recorded pause whose file was
// removed (`git clean -fdx`) is put back.
func (r *Result) pause(dir string, m record.Mark, s seen) {
	path := filepath.Join(dir, root.PausedFile)
	switch {
	case s.paused && m.Paused == "":
		data, _ := safefile.ReadFile(path, safefile.Small)
		kept := keep(dir, "paused", data, true)
		if os.Remove(path) == nil {
			r.Repairs = append(r.Repairs, Repair{File: root.PausedFile, What: "was written outside `harness pause` (a pause is a person's decision)", Kept: kept})
		}
	case !s.paused && m.Paused != "":
		os.MkdirAll(filepath.Dir(path), 0o755)
		if os.WriteFile(path, []byte(m.Paused+"\n"), 0o644) == nil {
			r.Repairs = append(r.Repairs, Repair{File: root.PausedFile, What: "was removed while the run is paused (`harness resume` ends a pause)"})
		}
	}
}

// initScript puts back harness-init.sh as the session started with it:
// SessionStart runs it outside every guard, so a change made during a
// session would run unseen at the next one. The user changes it between
// sessions (the next session start records it).
func (r *Result) initScript(dir string, rec record.Record, m record.Mark, s seen) {
	if !m.Init || s.init != nil && record.StampOf(s.init) == m.InitStamp() {
		return
	}
	live := filepath.Join(dir, record.InitCopy)
	want, err := safefile.ReadFile(rec.Path(record.InitCopy), record.MaxInit)
	if err != nil {
		return
	}
	got, readErr := safefile.ReadFile(live, record.MaxInit)
	if readErr == nil && bytes.Equal(got, want) {
		if s.init != nil {
			r.initStamp(s.init)
		}
		return
	}
	what := gone(readErr)
	if readErr == nil {
		what = "was changed during the session (it is the user's, changed between sessions)"
	}
	kept := keep(dir, record.InitCopy, got, readErr == nil)
	if atomicfile.Replace(live, want, 0o755) != nil {
		return
	}
	os.Chmod(live, 0o755)
	if fi, err := os.Stat(live); err == nil {
		r.initStamp(fi)
	}
	r.Repairs = append(r.Repairs, Repair{File: record.InitCopy, What: what, Kept: kept})
}

// initStamp notes harness-init.sh's stamp fi, its text the record's.
func (r *Result) initStamp(fi os.FileInfo) {
	r.mark.Init = new(record.StampOf(fi))
}

// WholeLog compares the log's whole text with the record's mirror and
// puts back what the harness wrote when an older line was rewritten: every
// check compares only the recent part (logWhole), so a same-length rewrite
// further back is found here. SessionEnd runs it once per session, off the
// path of the session's start and its tool calls (a 50 MB log costs some
// 10 ms to compare).
func WholeLog(p *project.Project, by string) Result {
	var res Result
	if !p.Recorded() {
		return res
	}
	defer judgeLock(p.Root, &res)()
	rec := p.Record()
	if rec.SameLogPrefix() {
		return res
	}
	res.repairLog(p.Root, rec)
	res.logRepairs(p.Root, by)
	return res
}

// TurnEnd is the check at a turn's end (the Stop hook): Check, with Legal
// judging a change of the tasks file, then the whole log compared with
// the mirror when another writer touched it (logSince). With keep, a
// clean check keeps its judgement as AfterTool's does: in a project
// switched off, the next turn's end (internal/quiet's Ended) and tool
// call end on it, where a turn without a tool call left none.
func TurnEnd(p *project.Project, by string, keep bool) Result {
	res := check(p, by, Legal(p), how{keep: keep})
	if whole := logSince(p, by); whole.Tampered() {
		res.Repairs = append(res.Repairs, whole.Repairs...)
	}
	return res
}

// logSince compares the log's whole text with the record's mirror when
// something other than the harness wrote the log since its last append
// (the mark's log stamp moved): the Stop hook runs it at every turn end, so
// a rewritten old line is found within the turn it was made in, and the
// whole log is read only when another writer touched it. A log that still
// begins with the mirror (appends only) has the stamp it had before the
// comparison recorded: a write after the stat moves the stamp again, so
// the next turn end compares once more.
func logSince(p *project.Project, by string) Result {
	rec := p.Record()
	stamp, ok := rec.LogStamp()
	if !ok {
		return Result{}
	}
	fi, err := os.Stat(progress.Path(p.Root))
	if err == nil && record.StampOf(fi) == stamp {
		return Result{}
	}
	res := WholeLog(p, by)
	if !res.Tampered() && err == nil {
		rec.TouchLog(fi)
	}
	return res
}

// repairLog puts the log back as the mirror holds it (lines appended
// after the harness's last one are lost with a rewrite before them: the
// changed copy is kept).
func (r *Result) repairLog(dir string, rec record.Record) {
	mirror, err := safefile.ReadFile(rec.Path(record.LogMirror), record.MaxLog)
	if err != nil {
		return
	}
	got, readErr := safefile.ReadFile(progress.Path(dir), record.MaxLog)
	what := gone(readErr)
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

// gone says what happened to a harness file that could not be read: it was
// deleted, or something the harness does not read (a FIFO, a directory, a
// file over its limit) was put in its place.
func gone(err error) string {
	switch {
	case errors.Is(err, safefile.ErrNotRegular):
		return "was replaced by something other than a regular file"
	case errors.Is(err, safefile.ErrTooLarge):
		return "was replaced by a file too large to be the harness's"
	}
	return "was deleted"
}

// TamperedDir is where changed copies are kept, in the runtime directory
// (a harness file: never committed, never rolled back).
const TamperedDir = ".harness-runtime/tampered"

// maxKept bounds the changed copies kept of one harness file: an agent
// that rewrote the tasks file in a loop, each copy as large as the file,
// would otherwise fill the disk. The newest are kept.
const maxKept = 50

// keep saves the changed copy of a harness file for the user and returns
// its path relative to the state root, "" when there is nothing to keep.
// Past maxKept copies of the file, the oldest are removed.
func keep(dir, name string, data []byte, exists bool) string {
	if !exists {
		return ""
	}
	// The copy's bytes are the other writer's to choose: they go only into
	// the project's own directory, never through a link put in its place
	// (to a directory some program reads every file of).
	kept, err := safefile.MkdirOwn(dir, TamperedDir)
	if err != nil {
		return ""
	}
	base := name + "." + time.Now().UTC().Format(keptStamp)
	if safefile.CreateOwn(filepath.Join(kept, base), data, 0o644) != nil {
		return ""
	}
	pruneKept(kept, name+".")
	return filepath.Join(TamperedDir, base)
}

// keptStamp is the time a kept copy's name ends in: UTC, fixed width, so
// the names' order is their age.
const keptStamp = "20060102T150405.000000000Z"

// pruneKept removes the oldest copies in kept named prefix and a
// keptStamp, past maxKept.
func pruneKept(kept, prefix string) {
	names, err := safefile.Names(kept)
	if err != nil {
		return
	}
	var copies []string
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, prefix); ok && len(rest) == len(keptStamp) {
			if _, err := time.Parse(keptStamp, rest); err == nil {
				copies = append(copies, n)
			}
		}
	}
	slices.Sort(copies)
	for _, n := range copies[:max(0, len(copies)-maxKept)] {
		os.Remove(filepath.Join(kept, n))
	}
}

// Legal adopts a change of the tasks file that the protocol's verbs could
// have made (state.JudgeTransition) and refuses anything else, saying why.
// A completion in it is kept only where the record cannot be written (the
// sandbox: no verb could record it), and then left to the hooks. The harness command's own check uses it: a verb
// whose record write Claude Code's sandbox refused is built on by the
// next verb of the same command line, not undone. The hooks judge the
// same change with the task's validation run (internal/guard).
func Legal(p *project.Project) Adopt {
	return func(before, after []byte) string {
		tr, _, _, why := Judge(p, before, after)
		if why != "" {
			return why
		}
		if len(tr.Completed) > 0 && p.Record().Writable() {
			// Where the harness's verbs write the record, a completion it
			// does not hold was not theirs.
			return tr.Completed[0] + " was completed outside `harness validate`"
		}
		p.Record().AddUnverified(tr.Completed...)
		return ""
	}
}

// Judge parses the record's copy of the tasks file (before) and the file
// as it is (after) and applies the protocol's transition rules to the
// change (state.JudgeTransition). why is "" for a legal change, else why
// it is not (a file that does not parse, or the rule broken); b and a are
// the parsed states, for the caller's further rules.
func Judge(p *project.Project, before, after []byte) (tr state.Transition, b, a *state.State, why string) {
	b, err := state.Parse(before, state.Path(p.Root))
	if err != nil {
		return tr, nil, nil, "the harness's own copy cannot be read: " + err.Error()
	}
	a, err = state.Parse(after, state.Path(p.Root))
	if err != nil {
		return tr, nil, nil, "it breaks the state: " + err.Error()
	}
	tr = state.JudgeTransition(b, a)
	return tr, b, a, tr.Broken
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
		known := root.Nearest(dir, func(d string) bool {
			m, ok := record.Of(d).Mark()
			return ok && m.Root == d && m.Active
		})
		if known != "" {
			return known
		}
	}
	return ""
}

// Settle brings the record in line with the files before the harness runs
// a command whose changes it will then check (a validation, a cleanup):
// what is there now was made before the command, so the command is not
// blamed for it. A change made outside the harness is put back, whoever
// runs the harness: a person keeps a hand edit with `harness adopt`.
// Inside Claude Code's sandbox the legal write of a verb before it on the
// same command line (a claim the record could not follow) is kept.
func Settle(p *project.Project) Result {
	return Check(p, "a writer outside the harness", sandboxed(p))
}

// hookSession is the Claude Code session this process runs in, "" outside
// one.
func hookSession() string { return os.Getenv("CLAUDE_CODE_SESSION_ID") }
