// Package record keeps the harness's own account of the files it writes in
// a project: a copy of the last tasks file it wrote, the mark (size and
// modification time) that file had right after the write, whether the hooks
// are on, and a mirror of every line it appended to the progress log.
//
// The account lives outside the work tree, in the user's state directory
// ($XDG_STATE_HOME/harness/records/<key>, ~/.local/state/… by default,
// $HARNESS_RECORD_DIR/<key> when set), where `git clean -fdx`, `git stash
// -a`, `rm -rf` of ignored files and an agent's edits of the project do not
// reach it. From it internal/integrity tells a change the harness made from
// one it did not, and puts back what the harness wrote.
//
// Keeping it is best effort: a record that cannot be written costs the
// repair, never the write of the state itself.
package record

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/jsonobj"
	"github.com/harness-agent/harness/internal/lock"
	rootpkg "github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
)

// File names inside a record directory.
const (
	TasksCopy = "harness-tasks.json" // the last tasks file the harness wrote
	LogMirror = "harness-progress.txt"
	InitCopy  = "harness-init.sh" // the script as a session started with it
	markName  = "mark.json"
	// What the hooks last checked of the harness's own wiring
	// (internal/wiring): the executables whose digest matched, by stat,
	// the findings last reported, and the last verdict with the stat of
	// every file it rests on.
	WiringVerified = "wiring-verified.txt"
	WiringSeen     = "wiring-seen.txt"
	WiringVerdict  = "wiring-verdict" // a prefix: one file for each place checked (wiring.Where.Verdict)
	// The last check after a tool call that found the project's files as
	// the harness left them, with the stat of every file that judgement
	// rests on (integrity.AfterTool): the next PostToolUse reads it before
	// its program is initialised and ends there when none of them moved
	// (internal/quiet).
	Judged = "judged.txt"
)

// trusted is set in the hooks' processes: see Trust.
var trusted bool

// Trust marks this process as a hook: code Claude Code starts on its
// events, which the agent's tools do not run in its stead. Only a hook
// records what the hooks alone may decide (which session last saw the
// marker, that a missing marker was a person's switching the harness
// off); internal/hook calls it first thing.
func Trust() { trusted = true }

// Trusted reports whether this process is a hook (Trust).
func Trusted() bool { return trusted }

// Limits on what is read whole of the files the record keeps copies of:
// the project's files are the agent's to replace, and a huge one (a sparse
// file) is not read into a hook. A log or a script past them is not one
// the harness can keep.
const (
	MaxLog   = 256 << 20 // the progress log
	MaxTasks = 128 << 20 // the tasks file (state.MaxFileSize)
	MaxInit  = 16 << 20  // harness-init.sh
)

// Dir returns the record directory of the state root root (an absolute,
// symlink-free path, as root.Find returns it). "" when no state directory
// can be named (no HOME).
func Dir(root string) string {
	base := Base()
	if base == "" {
		return ""
	}
	sum := digest.SHA256([]byte(root))
	return filepath.Join(base, hex.EncodeToString(sum[:8]))
}

// Record is one project's record, located once: its state root and the
// directory that keeps its record. A hook call or a verb opens it once
// (internal/project) and hands it down; every change and read of the
// record is one of its methods, so no step derives the directory again.
type Record struct {
	Root string // the state root (an absolute, symlink-free path)
	Dir  string // Dir(Root); "" when no state directory can be named
}

// Of is the record of the state root root.
func Of(root string) Record { return Record{Root: root, Dir: Dir(root)} }

// Path is the record's file name, "" when there is no record directory.
func (r Record) Path(name string) string {
	if r.Dir == "" {
		return ""
	}
	return filepath.Join(r.Dir, name)
}

// Base returns the directory holding every project's record:
// $HARNESS_RECORD_DIR, else $XDG_STATE_HOME/harness/records, else
// ~/.local/state/harness/records. "" when no state directory can be named
// (no HOME).
func Base() string {
	if base := os.Getenv("HARNESS_RECORD_DIR"); base != "" {
		return base
	}
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "harness", "records")
}

// All lists the records kept (a directory of Base each) with the state
// root each one is of, "" when its mark cannot be read: what uninstalling
// the harness leaves behind.
func All() (dirs, roots []string) {
	base := Base()
	if base == "" {
		return nil, nil
	}
	entries, _ := safefile.ReadDir(base)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(base, e.Name())
		m := Mark{}
		if data, err := safefile.ReadFile(filepath.Join(dir, markName), safefile.Small); err == nil {
			m, _ = decodeMark(data)
		}
		dirs, roots = append(dirs, dir), append(roots, m.Root)
	}
	return dirs, roots
}

// Mark is what the record knows of the live files.
type Mark struct {
	Root string `json:"root"`
	// The stamp of harness-tasks.json right after the harness wrote it:
	// size, modification time, inode and status-change time. No
	// unprivileged process can set a status-change time back, so a
	// same-size rewrite with its modification time put back still moves
	// the stamp (and the file is then compared with the record's copy).
	Size    int64 `json:"size"`
	ModNs   int64 `json:"mtime_ns"`
	Ino     int64 `json:"ino,omitempty"`
	CtimeNs int64 `json:"ctime_ns,omitempty"`
	Active  bool  `json:"active"` // whether the harness left .harness-active in place
	// The stamp of harness-init.sh as a session started with it (or
	// `harness init` wrote it); Init is false when there was none.
	Init        bool  `json:"init,omitempty"`
	InitSize    int64 `json:"init_size,omitempty"`
	InitModNs   int64 `json:"init_mtime_ns,omitempty"`
	InitIno     int64 `json:"init_ino,omitempty"`
	InitCtimeNs int64 `json:"init_ctime_ns,omitempty"`
	// Sessions are the Claude Code sessions (the latest few) whose hooks
	// saw the marker in place: a marker that disappears while one of them
	// runs was removed by it and is put back; one gone at the hook of a
	// session not among them was removed by a person between sessions,
	// which switches the harness off. Several sessions may work at once
	// (concurrent mode), hence a list.
	Sessions []string `json:"sessions,omitempty"`
	// Paused is when a person paused the run (`harness pause`), "" when it
	// is not paused: the hooks decide on this, not on the runtime
	// directory's pause file, which only mirrors it.
	Paused string `json:"paused,omitempty"`
	// Cancelled is when a person cancelled the run (`harness cancel`), ""
	// when it is not cancelled: the agent's verbs are refused until a
	// person's `harness init` switches the harness on again. The marker
	// cannot say it: with the hooks off, nothing stops a script from
	// putting .harness-active back.
	Cancelled string `json:"cancelled,omitempty"`
	// Unverified are tasks a change the record adopted completed, whose
	// validation the trusted side has not yet seen pass: the verification
	// gate runs them at the next turn end, whatever the log says.
	Unverified []string `json:"unverified,omitempty"`
}

// Stamp is what a stat says of a file, as the mark keeps it.
type Stamp struct{ Size, ModNs, Ino, CtimeNs int64 }

// StampOf is fi's stamp. The inode and status-change time are zero where
// the platform has none (Windows).
func StampOf(fi os.FileInfo) Stamp {
	ino, ctime := sysStamp(fi)
	return Stamp{Size: fi.Size(), ModNs: fi.ModTime().UnixNano(), Ino: ino, CtimeNs: ctime}
}

// String is the stamp in one word, "size:mtime:ctime:inode" (nanoseconds):
// the key the hooks' caches keep a file's version under (the summary of
// the tasks file, the verified executables).
func (s Stamp) String() string { return string(s.AppendTo(make([]byte, 0, 64))) }

// AppendTo appends String's text to b: a walk over thousands of files
// writes each stamp into its listing without a string of its own.
func (s Stamp) AppendTo(b []byte) []byte {
	for i, v := range [...]int64{s.Size, s.ModNs, s.CtimeNs, s.Ino} {
		if i > 0 {
			b = append(b, ':')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return b
}

// ChangedSince reports whether the file of stamp s was written, or its
// status changed, at or after since (never when since is not set): a
// change within one tick of the clock keeps a file's times, so a stamp
// taken that recently cannot tell a later change by (git's "racily
// clean" entries). The caches that keep an answer by the stamps it rests
// on (the tree's state, the wiring's verdict) keep none so recent.
func (s Stamp) ChangedSince(since time.Time) bool {
	return !since.IsZero() && (s.ModNs >= since.UnixNano() || s.CtimeNs >= since.UnixNano())
}

// Tasks is the stamp the tasks file had when the harness last wrote it.
func (m Mark) Tasks() Stamp { return Stamp{m.Size, m.ModNs, m.Ino, m.CtimeNs} }

// InitStamp is the stamp harness-init.sh had when it was recorded.
func (m Mark) InitStamp() Stamp { return Stamp{m.InitSize, m.InitModNs, m.InitIno, m.InitCtimeNs} }

func (m *Mark) setTasks(s Stamp) {
	m.Size, m.ModNs, m.Ino, m.CtimeNs = s.Size, s.ModNs, s.Ino, s.CtimeNs
}

func (m *Mark) setInit(s Stamp) {
	m.InitSize, m.InitModNs, m.InitIno, m.InitCtimeNs = s.Size, s.ModNs, s.Ino, s.CtimeNs
}

// Mark is the record's mark; ok is false when there is no record.
func (r Record) Mark() (m Mark, ok bool) { return markIn(r.Dir) }

// MarkPath is the file the mark is kept in, "" when there is no record
// directory: a judgement kept by the stat of the files it rests on
// (integrity.AfterTool) names it among them.
func (r Record) MarkPath() string { return r.Path(markName) }

// markIn is the mark of the record whose directory is dir.
func markIn(dir string) (m Mark, ok bool) {
	if dir == "" {
		return Mark{}, false
	}
	data, err := safefile.ReadFile(filepath.Join(dir, markName), safefile.Small)
	if err != nil {
		return Mark{}, false
	}
	return decodeMark(data)
}

// The mark is written and read by hand (internal/jsonobj), in the layout
// json.Marshal gives the struct and its tags: every hook's integrity check
// reads it, and encoding/json's first use in a process costs more than
// the rest of such a hook.

// encode is the mark file's text.
func (m Mark) encode() []byte {
	w := jsonobj.New(false)
	w.Str("root", m.Root)
	w.Int("size", m.Size)
	w.Int("mtime_ns", m.ModNs)
	if m.Ino != 0 {
		w.Int("ino", m.Ino)
	}
	if m.CtimeNs != 0 {
		w.Int("ctime_ns", m.CtimeNs)
	}
	w.Bool("active", m.Active)
	if m.Init {
		w.Bool("init", true)
	}
	if m.InitSize != 0 {
		w.Int("init_size", m.InitSize)
	}
	if m.InitModNs != 0 {
		w.Int("init_mtime_ns", m.InitModNs)
	}
	if m.InitIno != 0 {
		w.Int("init_ino", m.InitIno)
	}
	if m.InitCtimeNs != 0 {
		w.Int("init_ctime_ns", m.InitCtimeNs)
	}
	if len(m.Sessions) > 0 {
		w.Strs("sessions", m.Sessions)
	}
	if m.Paused != "" {
		w.Str("paused", m.Paused)
	}
	if m.Cancelled != "" {
		w.Str("cancelled", m.Cancelled)
	}
	if len(m.Unverified) > 0 {
		w.Strs("unverified", m.Unverified)
	}
	return w.Bytes()
}

// decodeMark reads a mark file; ok is false when data is not one.
func decodeMark(data []byte) (m Mark, ok bool) {
	obj, ok := jsonobj.Read(data)
	if !ok {
		return Mark{}, false
	}
	return Mark{Root: obj.Get("root").Str, Size: obj.Get("size").Int(), ModNs: obj.Get("mtime_ns").Int(),
		Ino: obj.Get("ino").Int(), CtimeNs: obj.Get("ctime_ns").Int(),
		Active: obj.Get("active").Bool(), Init: obj.Get("init").Bool(), InitSize: obj.Get("init_size").Int(),
		InitModNs: obj.Get("init_mtime_ns").Int(), InitIno: obj.Get("init_ino").Int(),
		InitCtimeNs: obj.Get("init_ctime_ns").Int(), Sessions: jsonobj.Strs(obj.Get("sessions")),
		Paused: obj.Get("paused").Str, Cancelled: obj.Get("cancelled").Str, Unverified: jsonobj.Strs(obj.Get("unverified"))}, true
}

// SaveTasks records data as the tasks file the harness has just written
// to the state root, with the live file's mark, and whether the hooks are
// on. The first record of a project also starts the log's mirror from the
// log as it is.
func (r Record) SaveTasks(data []byte, active bool) error {
	root, dir := r.Root, r.Dir
	if dir == "" {
		return errNoDir
	}
	fi, err := os.Stat(filepath.Join(root, TasksCopy))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, LogMirror)); os.IsNotExist(err) {
		if log, err := safefile.ReadFile(filepath.Join(root, LogMirror), MaxLog); err == nil {
			replace(filepath.Join(dir, LogMirror), log)
		}
	}
	if err := replace(filepath.Join(dir, TasksCopy), data); err != nil {
		return err
	}
	// What the mark says of the other files (harness-init.sh, the
	// marker's session, the pause) is kept: a save of the tasks file
	// changes none of them.
	stamp := writtenStamp(filepath.Join(root, TasksCopy), fi, data)
	return editLocked(dir, func(m *Mark, ok bool) bool {
		if !ok || m.Root != root {
			*m, ok = Mark{Root: root}, false
		}
		m.setTasks(stamp)
		m.Active = stillActive(*m, ok, active)
		return true
	})
}

// writtenStamp is the stamp to record for the file at path, just written
// with data, whose stat is fi: fi's when the file holds data, else one no
// file has, so that the next check compares the file with the copy. A
// writer racing the harness (a background job replacing the file between
// the harness's write and its stat) must not have its file recorded as the
// harness's.
func writtenStamp(path string, fi os.FileInfo, data []byte) Stamp {
	if fi.Size() == int64(len(data)) {
		if got, err := safefile.ReadFile(path, MaxTasks); err == nil && bytes.Equal(got, data) {
			if after, err := os.Stat(path); err == nil && StampOf(after) == StampOf(fi) {
				return StampOf(fi)
			}
		}
	}
	return Stamp{Size: -1}
}

// stillActive is what a save records of the hooks being on: the marker's
// presence, except that only a hook records them switched off. A marker
// that vanished under a verb's save (a script removed it) is the next
// hook's to judge: put back when a live session saw it, honoured as a
// person's switching off otherwise. A verb must never be what switches
// the harness off.
func stillActive(m Mark, recorded, active bool) bool {
	return active || recorded && m.Active && !trusted
}

// PatchTasks records the patch of the tasks file the harness has just made
// in place (nv written over old at offset at; state's patchInPlace): the
// record's copy is patched the same way and the mark follows the live
// file. before is the live file as it was before the patch: the copy is
// patched only when the mark says it was the copy of that file. It reports
// whether it did; when not, the caller records the file whole (SaveTasks).
func (r Record) PatchTasks(before os.FileInfo, at int64, old, nv []byte, active bool) bool {
	root, dir := r.Root, r.Dir
	patched := false
	err := editLocked(dir, func(m *Mark, ok bool) bool {
		if !ok || m.Tasks() != StampOf(before) {
			return false
		}
		if !atomicfile.Patch(filepath.Join(dir, TasksCopy), before.Size(), at, old, nv) {
			return false
		}
		fi, err := os.Stat(filepath.Join(root, TasksCopy))
		if err != nil || fi.Size() != before.Size() || !holds(filepath.Join(root, TasksCopy), at, nv) {
			return false // another writer raced the patch: the caller records the file whole
		}
		m.setTasks(StampOf(fi))
		m.Active = stillActive(*m, true, active)
		patched = true
		return true
	})
	return patched && err == nil
}

// SaveInit records the project's harness-init.sh as it is now: the
// user's script, which a session starts with and nothing in the session
// may change. A missing script is recorded as none.
func (r Record) SaveInit() {
	dir := r.Dir
	path := filepath.Join(r.Root, InitCopy)
	if m, ok := markIn(dir); !ok || initRecorded(m, path) {
		return // what a session start finds (no lock taken for it)
	}
	editLocked(dir, func(m *Mark, ok bool) bool {
		if !ok || initRecorded(*m, path) {
			return false
		}
		fi, err := os.Lstat(path)
		data, rerr := safefile.ReadFile(path, MaxInit)
		if err != nil || rerr != nil || !fi.Mode().IsRegular() {
			was := m.Init
			m.Init = false
			m.setInit(Stamp{})
			return was
		}
		if replace(filepath.Join(dir, InitCopy), data) != nil {
			return false
		}
		m.Init = true
		m.setInit(StampOf(fi))
		return true
	})
}

// initRecorded reports whether m records the script at path as it is:
// its stamp when it is a regular file, none when it is not there.
func initRecorded(m Mark, path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return !m.Init
	}
	return m.Init && m.InitStamp() == StampOf(fi)
}

// maxSessions bounds the sessions the mark remembers.
const maxSessions = 8

// SawMarker reports whether a hook of session saw the marker in place.
func (m Mark) SawMarker(session string) bool { return slices.Contains(m.Sessions, session) }

// Change is what a check learned the mark must now say of the files it
// follows, written in one edit (Note): each field set is a change, the
// rest of the mark is kept.
type Change struct {
	// Session saw the marker in place ("" for none). Only a hook sets it:
	// the hooks are the one judge of whether a missing marker was a live
	// session's doing.
	Session string
	// Active, when set, is whether the hooks are on.
	Active *bool
	// Tasks and Init, when set, are the new stamps of the tasks file and
	// of harness-init.sh, found to hold the text the record has.
	Tasks, Init *Stamp
}

// Note writes c into the mark, when there is a record and c changes it.
func (r Record) Note(c Change) { edit(r.Dir, c.apply) }

// apply makes m say c, reporting whether that changed it.
func (c Change) apply(m *Mark, ok bool) bool {
	if !ok {
		return false
	}
	changed := false
	if c.Session != "" && !m.SawMarker(c.Session) {
		m.Sessions = append(m.Sessions, c.Session)
		if len(m.Sessions) > maxSessions {
			m.Sessions = m.Sessions[len(m.Sessions)-maxSessions:]
		}
		changed = true
	}
	if c.Active != nil && m.Active != *c.Active {
		m.Active, changed = *c.Active, true
	}
	if c.Tasks != nil && m.Tasks() != *c.Tasks {
		m.setTasks(*c.Tasks)
		changed = true
	}
	if c.Init != nil && m.InitStamp() != *c.Init {
		m.setInit(*c.Init)
		changed = true
	}
	return changed
}

// SetPaused records a person's pause (at, a timestamp) or its end ("").
// It reports whether the record holds it (false without a record).
func (r Record) SetPaused(at string) bool {
	return r.set(func(m *Mark) *string { return &m.Paused }, at)
}

// SetCancelled records a person's cancel (at, a timestamp) or its end
// (""). It reports whether the record holds it (false without a record).
func (r Record) SetCancelled(at string) bool {
	return r.set(func(m *Mark) *string { return &m.Cancelled }, at)
}

// set makes the mark's field (a person's decision: field picks it) say
// to, reporting whether the record holds it (false without a record).
func (r Record) set(field func(*Mark) *string, to string) bool {
	held := false
	err := edit(r.Dir, func(m *Mark, ok bool) bool {
		held = ok
		if !ok || *field(m) == to {
			return false
		}
		*field(m) = to
		return true
	})
	return held && err == nil
}

// AddUnverified records ids as completed without the trusted side having
// seen their validation pass (see Mark.Unverified).
func (r Record) AddUnverified(ids ...string) {
	if len(ids) == 0 {
		return
	}
	edit(r.Dir, func(m *Mark, ok bool) bool {
		n := len(m.Unverified)
		for _, id := range ids {
			if !slices.Contains(m.Unverified, id) {
				m.Unverified = append(m.Unverified, id)
			}
		}
		return ok && len(m.Unverified) > n
	})
}

// Verified takes ids off the record's unverified tasks: the verification
// gate ran their validation to an outcome.
func (r Record) Verified(ids ...string) {
	edit(r.Dir, func(m *Mark, ok bool) bool {
		n := len(m.Unverified)
		m.Unverified = slices.DeleteFunc(m.Unverified, func(id string) bool { return slices.Contains(ids, id) })
		return ok && len(m.Unverified) < n
	})
}

// SameLogPrefix reports whether the project's progress log begins with
// the record's mirror of it, byte for byte: the whole text the harness
// wrote, read side by side in pieces. True when there is no mirror to
// compare.
func (r Record) SameLogPrefix() bool {
	root, dir := r.Root, r.Dir
	if dir == "" {
		return true
	}
	fm, err := safefile.Open(filepath.Join(dir, LogMirror))
	if err != nil {
		return true
	}
	defer fm.Close()
	mi, err := fm.Stat()
	if err != nil {
		return true
	}
	fl, err := safefile.Open(filepath.Join(root, LogMirror))
	if err != nil {
		return false
	}
	defer fl.Close()
	same, mirrorRead := samePrefix(fm, fl, mi.Size())
	return same || !mirrorRead // a mirror that cannot be read: nothing to compare
}

// SetActive records whether the hooks are on, when there is a record.
func (r Record) SetActive(active bool) { r.Note(Change{Active: new(active)}) }

// Touch records the live tasks file's current mark, after a check found its
// content to be what the harness wrote (a `touch`, a copy of equal bytes).
func (r Record) Touch(fi os.FileInfo) { r.Note(Change{Tasks: new(StampOf(fi))}) }

// AppendLog records b, lines the harness has just appended to the
// project's progress log, in the record's mirror of the log, when there is
// a record.
// When others appended lines since the harness's last ones (the log grew by
// more than b), the mirror becomes the log as it is: lines others appended
// are kept, and from now on they are protected like the harness's own.
func (r Record) AppendLog(b []byte) {
	root, dir := r.Root, r.Dir
	if dir == "" {
		return
	}
	mirror := filepath.Join(dir, LogMirror)
	mi, err := os.Stat(mirror)
	if err != nil {
		return // no record yet: SaveTasks starts the mirror
	}
	live := filepath.Join(root, LogMirror)
	li, err := os.Stat(live)
	if err == nil && li.Size() != mi.Size()+int64(len(b)) {
		if log, err := safefile.ReadFile(live, MaxLog); err == nil && len(log) >= len(b) {
			replace(mirror, log)
			r.TouchLog(li)
			return
		}
	}
	f, err := safefile.Append(mirror, 0o600)
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	f.Close()
	if err == nil && werr == nil {
		r.TouchLog(li)
	}
}

// LockLog takes the lock an append to the progress log holds across
// its two writes, the log's and then the mirror's (AppendLog), and
// returns the function that releases it. Appends from several processes
// at once (a hook, a verb, another session's hook) otherwise reach the two
// files in different orders, and a check between them takes the log for
// rewritten. Without a mirror there is nothing to keep in step: no lock.
// A lock that cannot be had within markWait is gone without.
func (r Record) LockLog() (unlock func()) {
	dir := r.Dir
	if dir == "" {
		return func() {}
	}
	if _, err := os.Stat(filepath.Join(dir, LogMirror)); err != nil {
		return func() {}
	}
	return lock.Best(filepath.Join(dir, logLock), markWait)
}

// logLock, in the record's directory, is the lock LockLog takes.
const logLock = ".log.lock"

// holds reports whether the file at path has want at offset at.
func holds(path string, at int64, want []byte) bool {
	f, err := safefile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	got := make([]byte, len(want))
	_, err = f.ReadAt(got, at)
	return err == nil && bytes.Equal(got, want)
}

// LogStampName is the record's note of the stamp of harness-progress.txt
// right after the harness's last append: a log whose stamp moved since was
// written by something else (an append, or a rewrite of an old line the
// hooks' recent-part check cannot see), and the Stop hook compares it
// whole once, at the turn's end. Four fixed-width numbers, written over in
// place: every append of the harness updates it, so it costs one small
// write, not a file renamed over another.
const LogStampName = "log-stamp.txt"

const logStampFormat = "%020d %020d %020d %020d\n"

// LogStamp is the stamp the log had after the harness's last append; ok
// is false when none is recorded.
func (r Record) LogStamp() (s Stamp, ok bool) {
	dir := r.Dir
	if dir == "" {
		return Stamp{}, false
	}
	data, err := safefile.ReadFile(filepath.Join(dir, LogStampName), safefile.Small)
	if err != nil {
		return Stamp{}, false
	}
	n, err := fmt.Sscanf(string(data), logStampFormat, &s.Size, &s.ModNs, &s.Ino, &s.CtimeNs)
	return s, err == nil && n == 4
}

// TouchLog records fi, the live log's stat, as the harness's own last
// word in it: after an append of the harness's (AppendLog), or after the
// whole log was found to begin with the mirror (what moved its stamp was
// appends).
func (r Record) TouchLog(fi os.FileInfo) {
	dir := r.Dir
	if dir == "" {
		return
	}
	f, err := safefile.OpenFile(filepath.Join(dir, LogStampName), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	s := StampOf(fi)
	f.WriteAt([]byte(fmt.Sprintf(logStampFormat, s.Size, s.ModNs, s.Ino, s.CtimeNs)), 0)
	f.Close()
}

// edit is every change of a mark: it reads the mark of the record in dir
// (ok is false when there is none, or it does not parse), lets change
// alter it, and writes it when change says so, the read and the write
// under the mark's own lock. Hooks, verbs and a person's terminal each
// change a field or two of the one file; a read and a write of two of
// them interleaved would lose one's change (a person's pause, then put
// back as a forgery). Most calls change nothing (the session already
// noted, nothing to verify): change is asked first of the mark as it is,
// and the lock is taken only when it has something to write. change is
// then called again, so it must do nothing but change m (editLocked is
// for one that writes files too).
func edit(dir string, change func(m *Mark, ok bool) bool) error {
	if dir == "" {
		return errNoDir
	}
	if m, ok := markIn(dir); !change(&m, ok) {
		return nil
	}
	return editLocked(dir, change)
}

// editLocked is edit with change called once, under the lock. A lock
// that cannot be had within markWait (a holder stopped half-way) is gone
// without: a change is not dropped for it. change must not edit a mark
// itself (the lock is not reentrant).
func editLocked(dir string, change func(m *Mark, ok bool) bool) error {
	if dir == "" {
		return errNoDir
	}
	defer lock.Best(filepath.Join(dir, markLock), markWait)()
	m, ok := markIn(dir)
	if !change(&m, ok) {
		return nil
	}
	return writeMark(dir, m)
}

// markLock, in the record's directory, is the lock every change of the
// mark takes (a dot file: Hold and the checks leave it out).
const markLock = ".mark.lock"

// markWait bounds the wait for the mark's lock: a change holds it for a
// read and a small write.
var markWait = time.Second

var errNoDir = errors.New("no state directory for the harness record (HOME is not set)")

func writeMark(dir string, m Mark) error {
	markWrites.Add(1)
	return jsonobj.WriteFile(filepath.Join(dir, markName), m.encode(), 0o600)
}

// markWrites counts this process's writes of a mark: a mark read before
// the count last moved may be out of date (MarkWrites).
var markWrites atomic.Uint64

// MarkWrites is how many times this process wrote a mark: a caller that
// keeps a mark it read (internal/project) reads it again once the count
// moved.
func MarkWrites() uint64 { return markWrites.Load() }

// replace writes a file of the record. It does not fsync: the record only
// matters when the live files, which the harness syncs, are later broken by
// something else.
func replace(path string, data []byte) error { return atomicfile.Replace(path, data, 0o600) }

// Writable reports whether this process can write the record (Claude
// Code's sandbox keeps it read-only to the agent's commands).
func (r Record) Writable() bool {
	dir := r.Dir
	if dir == "" {
		return false
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

// TasksText is the record's copy of the tasks file: the text the harness
// last wrote. ok is false without one.
func (r Record) TasksText() (data []byte, ok bool) {
	dir := r.Dir
	if dir == "" {
		return nil, false
	}
	data, err := safefile.ReadFile(filepath.Join(dir, TasksCopy), MaxTasks)
	return data, err == nil
}

// SameTasks reports whether the project's tasks file holds the bytes of
// the record's copy: the text the harness last wrote, under whatever stat.
func (r Record) SameTasks() bool {
	return r.Dir != "" && sameBytes(filepath.Join(r.Root, TasksCopy), filepath.Join(r.Dir, TasksCopy))
}

// sameBytes reports whether the files at a and b hold the same bytes.
func sameBytes(a, b string) bool {
	fa, err := safefile.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := safefile.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	ia, errA := fa.Stat()
	ib, errB := fb.Stat()
	if errA != nil || errB != nil || ia.Size() != ib.Size() {
		return false
	}
	same, _ := samePrefix(fa, fb, ia.Size())
	return same
}

// samePrefix reports whether the first n bytes of a and b are the same,
// read side by side in pieces: two whole copies of a 7 MB file (or a
// 50 MB log) cost a fresh process more in page faults than the
// comparison. aRead is false when a could not be read that far (b's
// failure is a difference).
func samePrefix(a, b io.Reader, n int64) (same, aRead bool) {
	const piece = 256 << 10
	x, y := make([]byte, min(n, piece)), make([]byte, min(n, piece))
	for left := n; left > 0; {
		k := int(min(left, piece))
		if _, err := io.ReadFull(a, x[:k]); err != nil {
			return false, false
		}
		if _, err := io.ReadFull(b, y[:k]); err != nil || !bytes.Equal(x[:k], y[:k]) {
			return false, true
		}
		left -= int64(k)
	}
	return true, true
}

// SessionsDir is where the hooks keep each session's own files
// (its runtime: counters, where its story begins; its turn; its budget
// use): beside the record, outside the work tree, so that nothing done in
// the project (`git stash -a`, `rm -rf .harness-*`, `git clean -fdX`)
// resets a budget's spend or a session's view. At the sandboxed level it is
// read-only to the agent's commands like the record. "" without a home.
func (r Record) SessionsDir() string { return r.Path("sessions") }

// SessionFile is the file named prefix + the session's key + ".json" in
// SessionsDir (see root.SessionFileIn for the key); in the project's
// runtime directory where no record can be kept.
func (r Record) SessionFile(prefix, sessionID string) string {
	if dir := r.SessionsDir(); dir != "" {
		return rootpkg.SessionFileIn(dir, prefix, sessionID)
	}
	return rootpkg.SessionFile(r.Root, prefix, sessionID)
}
