package record

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/safefile"
)

// What Hold keeps in memory: every file of the record whole (the tasks
// file's copy up to MaxTasks), but the log's mirror, which grows with the
// job (50 MB and more), by its last MirrorTail bytes: enough to find a
// rewrite of the recent lines and to refuse the command's verdict, not to
// undo it. A command that runs costs a shell's start at least; a whole
// mirror's read would cost more than that.
const (
	MaxHeld    = MaxTasks
	MirrorTail = 64 << 10
)

// Held is a project's record as it was before the harness ran a command of
// the project's (a validation, a cleanup, harness-init.sh): every file of
// the record directory with its stamp and its bytes. That command is the
// agent's code; where it could write the record (the standard level, or a
// sandbox set up wrong) it could rewrite the record and the tasks file
// together, coherently, and nothing compared afterwards would tell. Held
// tells: the harness keeps its own copy in memory, out of any file's
// reach, for the length of the command.
type Held struct {
	dir   string
	files map[string]heldFile
}

type heldFile struct {
	stamp Stamp
	data  []byte
	whole bool // data is the whole file
}

// Hold reads the record. A project without one holds nothing, and
// Moved then reports nothing.
func (r Record) Hold() *Held {
	h := &Held{dir: r.Dir, files: map[string]heldFile{}}
	if h.dir == "" {
		return h
	}
	for name := range h.scan() {
		path := filepath.Join(h.dir, name)
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		hf := heldFile{stamp: StampOf(fi)}
		if name != LogMirror || fi.Size() <= MirrorTail {
			if data, err := safefile.ReadFile(path, MaxHeld); err == nil {
				hf.data, hf.whole = data, true
			}
		}
		if !hf.whole {
			if f, err := safefile.Open(path); err == nil {
				tail := make([]byte, min(fi.Size(), MirrorTail))
				n, _ := f.ReadAt(tail, fi.Size()-int64(len(tail)))
				f.Close()
				hf.data = tail[:n]
			}
		}
		h.files[name] = hf
	}
	return h
}

// scan lists the record's files that matter: every regular file but the
// temporary files of writes under way.
func (h *Held) scan() map[string]bool {
	names := map[string]bool{}
	entries, err := os.ReadDir(h.dir)
	if err != nil {
		return names
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || tempName(e.Name()) {
			continue
		}
		names[e.Name()] = true
	}
	return names
}

// tempName reports the record's temporary files: "<name>.<pid>" of a
// write in progress (state's replace), ".probe-*" of Writable.
func tempName(name string) bool {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || i == len(name)-1 {
		return false
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Moved lists the record's files whose stamp changed since Hold, that
// appeared or that disappeared, sorted.
func (h *Held) Moved() []string {
	var moved []string
	if h.dir == "" {
		return nil
	}
	now := h.scan()
	for name, hf := range h.files {
		fi, err := os.Lstat(filepath.Join(h.dir, name))
		if err != nil || !fi.Mode().IsRegular() || StampOf(fi) != hf.stamp {
			moved = append(moved, name)
		}
	}
	for name := range now {
		if _, ok := h.files[name]; !ok && len(h.files) > 0 {
			moved = append(moved, name)
		}
	}
	slices.Sort(moved)
	return moved
}

// HeldFile is one file as Hold read it: its bytes (the last ones, ending
// at Size, when Whole is false).
type HeldFile struct {
	Data  []byte
	Whole bool
	Size  int64
}

// File is the named file as held; ok is false when there was none.
func (h *Held) File(name string) (f HeldFile, ok bool) {
	hf, ok := h.files[name]
	return HeldFile{Data: hf.data, Whole: hf.whole, Size: hf.stamp.Size}, ok
}

// Tasks is the record's copy of the tasks file as held; ok is false when
// there was none.
func (h *Held) Tasks() (data []byte, ok bool) {
	hf, ok := h.files[TasksCopy]
	return hf.data, ok && hf.whole
}

// Mark is the record's mark as held; ok is false when there was none.
func (h *Held) Mark() (Mark, bool) {
	hf, ok := h.files[markName]
	if !ok {
		return Mark{}, false
	}
	return decodeMark(hf.data)
}

// Restore puts names (as Moved lists them) back as held: a changed file
// gets its held bytes again, a new one is removed. The mark is the held
// mark with what only makes the harness stricter kept from the current one
// (a person's pause or cancel, tasks still to verify, sessions seen with the
// marker), and the tasks file's stamp of the held copy. It returns the
// names it could not put back (the log's mirror, held by its tail).
func (h *Held) Restore(names []string) (lost []string) {
	for _, name := range names {
		path := filepath.Join(h.dir, name)
		hf, ok := h.files[name]
		switch {
		case !ok:
			os.Remove(path)
		case name == markName:
			editLocked(h.dir, h.mergeMark)
		case hf.whole:
			atomicfile.Replace(path, hf.data, 0o600)
		default:
			lost = append(lost, name)
		}
	}
	return lost
}

// mergeMark makes the current mark cur (ok: there is one) the held mark,
// with the current one's additions that only tighten what the hooks do.
// It reports whether there was a held mark to write.
func (h *Held) mergeMark(cur *Mark, ok bool) bool {
	m, held := h.Mark()
	if !held {
		return false
	}
	if ok && cur.Root == m.Root {
		tighten(&m, *cur)
	}
	*cur = m
	return true
}

// tighten adds to m what cur says that only makes the hooks stricter.
func tighten(m *Mark, cur Mark) {
	if m.Paused == "" {
		m.Paused = cur.Paused
	}
	if m.Cancelled == "" {
		m.Cancelled = cur.Cancelled
	}
	for _, id := range cur.Unverified {
		if !slices.Contains(m.Unverified, id) {
			m.Unverified = append(m.Unverified, id)
		}
	}
	for _, s := range cur.Sessions {
		if !m.SawMarker(s) {
			m.Sessions = append(m.Sessions, s)
		}
	}
	if len(m.Sessions) > maxSessions {
		m.Sessions = m.Sessions[len(m.Sessions)-maxSessions:]
	}
}
