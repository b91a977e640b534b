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
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/jsonobj"
)

// File names inside a record directory.
const (
	TasksCopy = "harness-tasks.json" // the last tasks file the harness wrote
	LogMirror = "harness-progress.txt"
	InitCopy  = "harness-init.sh" // the script as a session started with it
	markName  = "mark.json"
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

// Base returns the directory holding every project's record
// ($HARNESS_RECORD_DIR, else $XDG_STATE_HOME/harness/records, else
// ~/.local/state/harness/records): what `harness install --sandbox` makes
// read-only to the agent's commands. "" when no state directory can be
// named (no HOME).
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

// Mark is what the record knows of the live files.
type Mark struct {
	Root   string `json:"root"`
	Size   int64  `json:"size"`     // of harness-tasks.json right after the harness wrote it
	ModNs  int64  `json:"mtime_ns"` // its modification time then
	Active bool   `json:"active"`   // whether the harness left .harness-active in place
	// The mark of harness-init.sh as a session started with it (or `harness
	// init` wrote it); Init is false when there was none.
	Init      bool  `json:"init,omitempty"`
	InitSize  int64 `json:"init_size,omitempty"`
	InitModNs int64 `json:"init_mtime_ns,omitempty"`
}

// ReadMark returns the record's mark for root; ok is false when there is
// no record.
func ReadMark(root string) (m Mark, ok bool) {
	dir := Dir(root)
	if dir == "" {
		return Mark{}, false
	}
	data, err := os.ReadFile(filepath.Join(dir, markName))
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
	return w.Bytes()
}

// decodeMark reads a mark file; ok is false when data is not one.
func decodeMark(data []byte) (m Mark, ok bool) {
	obj, ok := jsonobj.Read(data)
	if !ok {
		return Mark{}, false
	}
	return Mark{Root: obj.Get("root").Str, Size: obj.Get("size").Int(), ModNs: obj.Get("mtime_ns").Int(),
		Active: obj.Get("active").Bool(), Init: obj.Get("init").Bool(), InitSize: obj.Get("init_size").Int(),
		InitModNs: obj.Get("init_mtime_ns").Int()}, true
}

// SaveTasks records data as the tasks file the harness has just written
// to root, with the live file's mark, and whether the hooks are on. The
// first record of a project also starts the log's mirror from the log as
// it is.
func SaveTasks(root string, data []byte, active bool) error {
	dir := Dir(root)
	if dir == "" {
		return fmt.Errorf("no state directory for the harness record (HOME is not set)")
	}
	fi, err := os.Stat(filepath.Join(root, TasksCopy))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, LogMirror)); os.IsNotExist(err) {
		if log, err := os.ReadFile(filepath.Join(root, LogMirror)); err == nil {
			replace(filepath.Join(dir, LogMirror), log)
		}
	}
	if err := replace(filepath.Join(dir, TasksCopy), data); err != nil {
		return err
	}
	return writeMark(dir, Mark{Root: root, Size: fi.Size(), ModNs: fi.ModTime().UnixNano(), Active: active})
}

// PatchTasks records the patch of the tasks file the harness has just made
// in place (nv written over old at offset at; state's patchInPlace): the
// record's copy is patched the same way and the mark follows the live
// file. before is the live file as it was before the patch: the copy is
// patched only when the mark says it was the copy of that file. It reports
// whether it did; when not, the caller records the file whole (SaveTasks).
func PatchTasks(root string, before os.FileInfo, at int64, old, nv []byte, active bool) bool {
	m, ok := ReadMark(root)
	if !ok || m.Size != before.Size() || m.ModNs != before.ModTime().UnixNano() {
		return false
	}
	dir := Dir(root)
	if !atomicfile.Patch(filepath.Join(dir, TasksCopy), before.Size(), at, old, nv) {
		return false
	}
	fi, err := os.Stat(filepath.Join(root, TasksCopy))
	if err != nil {
		return false
	}
	m.Size, m.ModNs, m.Active = fi.Size(), fi.ModTime().UnixNano(), active
	return writeMark(dir, m) == nil
}

// SaveInit records root's harness-init.sh as it is now: the user's script,
// which a session starts with and nothing in the session may change. A
// missing script is recorded as none.
func SaveInit(root string) {
	m, ok := ReadMark(root)
	if !ok {
		return
	}
	dir := Dir(root)
	path := filepath.Join(root, InitCopy)
	fi, err := os.Lstat(path)
	data, rerr := os.ReadFile(path)
	if err != nil || rerr != nil || !fi.Mode().IsRegular() {
		if m.Init {
			m.Init, m.InitSize, m.InitModNs = false, 0, 0
			writeMark(dir, m)
		}
		return
	}
	if m.Init && m.InitSize == fi.Size() && m.InitModNs == fi.ModTime().UnixNano() {
		return
	}
	if replace(filepath.Join(dir, InitCopy), data) != nil {
		return
	}
	m.Init, m.InitSize, m.InitModNs = true, fi.Size(), fi.ModTime().UnixNano()
	writeMark(dir, m)
}

// TouchInit records harness-init.sh's current mark after a check found its
// content unchanged.
func TouchInit(root string, fi os.FileInfo) {
	m, ok := ReadMark(root)
	if !ok {
		return
	}
	m.InitSize, m.InitModNs = fi.Size(), fi.ModTime().UnixNano()
	writeMark(Dir(root), m)
}

// SetActive records whether the hooks are on, when root has a record.
func SetActive(root string, active bool) {
	m, ok := ReadMark(root)
	if !ok || m.Active == active {
		return
	}
	m.Active = active
	writeMark(Dir(root), m)
}

// Touch records the live tasks file's current mark, after a check found its
// content to be what the harness wrote (a `touch`, a copy of equal bytes).
func Touch(root string, fi os.FileInfo) {
	m, ok := ReadMark(root)
	if !ok {
		return
	}
	m.Size, m.ModNs = fi.Size(), fi.ModTime().UnixNano()
	writeMark(Dir(root), m)
}

// AppendLog records b, lines the harness has just appended to root's
// progress log, in the record's mirror of the log, when root has a record.
// When others appended lines since the harness's last ones (the log grew by
// more than b), the mirror becomes the log as it is: lines others appended
// are kept, and from now on they are protected like the harness's own.
func AppendLog(root string, b []byte) {
	dir := Dir(root)
	if dir == "" {
		return
	}
	mirror := filepath.Join(dir, LogMirror)
	mi, err := os.Stat(mirror)
	if err != nil {
		return // no record yet: SaveTasks starts the mirror
	}
	live := filepath.Join(root, LogMirror)
	if li, err := os.Stat(live); err == nil && li.Size() != mi.Size()+int64(len(b)) {
		if log, err := os.ReadFile(live); err == nil && len(log) >= len(b) {
			replace(mirror, log)
			return
		}
	}
	f, err := os.OpenFile(mirror, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	f.Write(b)
	f.Close()
}

func writeMark(dir string, m Mark) error { return replace(filepath.Join(dir, markName), m.encode()) }

// replace writes a file of the record. It does not fsync: the record only
// matters when the live files, which the harness syncs, are later broken by
// something else.
func replace(path string, data []byte) error { return atomicfile.Replace(path, data, 0o600) }

// SameTasks reports whether the tasks file in root holds the bytes of the
// record's copy: the text the harness last wrote, under whatever stat.
func SameTasks(root string) bool {
	dir := Dir(root)
	return dir != "" && sameBytes(filepath.Join(root, TasksCopy), filepath.Join(dir, TasksCopy))
}

// sameBytes reports whether the files at a and b hold the same bytes,
// read side by side in pieces: two whole copies of a 7 MB file cost a
// fresh process more in page faults than the comparison.
func sameBytes(a, b string) bool {
	fa, err := os.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	const piece = 256 << 10
	x, y := make([]byte, piece), make([]byte, piece)
	for {
		n, errA := io.ReadFull(fa, x)
		m, errB := io.ReadFull(fb, y)
		if n != m || !bytes.Equal(x[:n], y[:m]) {
			return false
		}
		if errA != nil || errB != nil {
			// Both ended here (a short piece or none), or a read failed.
			return ended(errA) && ended(errB)
		}
	}
}

// ended reports whether err is io.ReadFull's word for the end of a file.
func ended(err error) bool { return err == io.EOF || err == io.ErrUnexpectedEOF }
