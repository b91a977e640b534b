package shadow

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/root"
)

// addInProcess is a checkpoint's `git add -A` and its step for the ignored
// files, done in process for the usual checkpoint after a change: a few
// files edited, made or removed. The work tree is walked, each file's stat
// compared with its index entry as git compares them, and only the files
// that moved are read and hashed; the index is written with them and its
// cache of trees, as git add and write-tree leave it.
//
// What a checkpoint holds is every file of the tree but the harness's,
// ignored ones included up to MaxIgnored, so the ignore rules matter only
// for a larger file: one new or changed, or anything else this does not
// decide as git would (a nested repository, a name git refuses, a special
// file, a platform whose stat is not read here, more than maxHashed files
// to hash), is left to git, and done reports false with nothing written.
//
// ours says the index was written here last (head.ours): its entries are
// trusted as they stand, those this smudged included (they no longer match
// their files). An index git wrote is read with more caution than git's
// own: an entry whose file changed within two seconds of the index is
// hashed again, whatever its stat says.
func (r repo) addInProcess(deadline time.Time, ours bool) (done bool, err error) {
	path := filepath.Join(r.dir, "index")
	ix, ok := readIndex(path)
	if !ok {
		return false, nil
	}
	files, ok := r.scan(deadline)
	if !ok {
		return false, nil
	}
	var (
		out      = make([]entry, 0, len(files))
		moved    []string // paths whose entry came, went, or changed its blob or mode
		hashed   int
		reshaped bool // entries came or went: the untracked cache no longer holds
		changed  bool // anything to write
	)
	// An entry of git's can be trusted only when its file was not
	// changed near the time the index was written (git's racily clean
	// entries): within that window a second change of the same size can
	// leave the stat as it was.
	racyBefore := ix.mtime.Add(-quiet)
	i, j := 0, 0
	for i < len(ix.entries) || j < len(files) {
		var e *entry
		var f *scanned
		switch {
		case j == len(files) || i < len(ix.entries) && ix.entries[i].path < files[j].path:
			e = &ix.entries[i]
			i++
		case i == len(ix.entries) || files[j].path < ix.entries[i].path:
			f = &files[j]
			j++
		default:
			e, f = &ix.entries[i], &files[j]
			i, j = i+1, j+1
		}
		if e != nil && e.mode == 0o160000 {
			return false, nil // a submodule's entry: git's to keep
		}
		if f == nil {
			moved, reshaped, changed = append(moved, e.path), true, true
			continue
		}
		mode := f.mode()
		sd, ok := statData(f.fi, mode)
		if !ok {
			return false, nil
		}
		if e != nil && sameStat(e.stat(), sd) && (ours || modTime(sd).Before(racyBefore)) {
			out = append(out, *e)
			continue
		}
		if f.fi.Size() > MaxIgnored {
			return false, nil // whether it is ignored decides: git's rules
		}
		if hashed++; hashed > maxHashed {
			return false, nil
		}
		obj, oid, ok := r.read(f)
		if !ok {
			return false, nil
		}
		if e == nil || e.oid != oid {
			// (An entry's own blob is in the repository already, perhaps
			// packed, where a loose copy would only double it.)
			if err := r.store(obj, oid); err != nil {
				return false, err
			}
		}
		if mt := modTime(sd); !mt.Before(time.Now().Add(-racyWindow(mt))) {
			sd[9] = 0 // smudged, as git does a racily clean entry: hashed again next time
		}
		ne := newEntry(f.path, mode, oid, sd)
		if e == nil || e.oid != oid || e.mode != mode {
			moved = append(moved, f.path)
			reshaped = reshaped || e == nil
		}
		out = append(out, ne)
		changed = true
	}
	if !changed {
		return true, nil
	}
	for _, p := range moved {
		ix.tree.invalidate(p)
	}
	if _, err := r.buildTree(ix.tree, out, ""); err != nil {
		if errors.Is(err, errShape) {
			return false, nil
		}
		return false, err
	}
	if reshaped {
		ix.untr = nil // git builds it again
	}
	head := make([]byte, 0, ix.end+len(moved)*128)
	head = append(head, ix.data[:8]...) // DIRC and the version
	head = binary.BigEndian.AppendUint32(head, uint32(len(out)))
	for _, e := range out {
		head = append(head, e.raw...)
	}
	ix.entries = out
	return true, ix.writeWith(path, head, false)
}

// modTime is the modification time of stat data.
func modTime(sd [10]uint32) time.Time { return time.Unix(int64(sd[2]), int64(sd[3])) }

// racyWindow is how long after its file's modification time mt an entry's
// stat may not tell a second change apart: a file system that keeps whole
// seconds (FAT keeps two) gives times without nanoseconds; the others move
// a time at each tick of the kernel's clock, a few milliseconds at most.
func racyWindow(mt time.Time) time.Duration {
	if mt.Nanosecond() == 0 {
		return 2 * time.Second
	}
	return 100 * time.Millisecond
}

// maxHashed bounds the files a checkpoint hashes in process: past it (a
// generator's output, a checkout) git's add, which streams them into one
// pack, does better than loose objects one by one.
const maxHashed = 256

// sameStat reports whether two stat data say the same file version as git
// sees it: everything but the device.
func sameStat(a, b [10]uint32) bool {
	a[4], b[4] = 0, 0
	return a == b
}

// newEntry is an index entry of version 2 or 3 at stage 0.
func newEntry(path string, mode uint32, oid [20]byte, sd [10]uint32) entry {
	size := (entryFixed + len(path) + 8) &^ 7
	raw := make([]byte, 0, size)
	for _, v := range sd {
		raw = binary.BigEndian.AppendUint32(raw, v)
	}
	raw = append(raw, oid[:]...)
	raw = binary.BigEndian.AppendUint16(raw, uint16(min(len(path), nameMask)))
	raw = append(raw, path...)
	raw = raw[:size] // the padding: at least one NUL
	return entry{path: path, mode: mode, oid: oid, raw: raw}
}

// invalidate marks the cached trees of the directories holding path as
// to be computed again, as git add does.
func (t *cacheTree) invalidate(path string) {
	t.count = -1
	for {
		slash := strings.IndexByte(path, '/')
		if slash < 0 {
			return
		}
		i, found := slices.BinarySearchFunc(t.subs, path[:slash], func(s *cacheTree, name string) int { return subtreeOrder(s.name, name) })
		if !found {
			return
		}
		t = t.subs[i]
		t.count = -1
		path = path[slash+1:]
	}
}

// scanned is one file of the work tree.
type scanned struct {
	path string // relative, with '/'
	fi   os.FileInfo
}

// mode is the file's mode as git records it.
func (f *scanned) mode() uint32 {
	switch {
	case f.fi.Mode()&os.ModeSymlink != 0:
		return 0o120000
	case f.fi.Mode().Perm()&0o100 != 0:
		return 0o100755
	}
	return 0o100644
}

// read is the file's blob and its id; ok is false when the file changed
// under the read (git decides).
func (r repo) read(f *scanned) (obj []byte, oid [20]byte, ok bool) {
	abs := filepath.Join(r.root, filepath.FromSlash(f.path))
	var data []byte
	if f.fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(abs)
		if err != nil {
			return nil, oid, false
		}
		data = []byte(target)
	} else {
		fh, err := openFile(abs)
		if err != nil {
			return nil, oid, false
		}
		data = make([]byte, f.fi.Size()+1)
		n, _ := readFull(fh, data)
		fh.Close()
		data = data[:n]
	}
	if int64(len(data)) != f.fi.Size() {
		return nil, oid, false
	}
	obj, oid = object("blob", data)
	return obj, oid, true
}

// openFile is os.Open (a variable for the tests, which count the files
// read).
var openFile = os.Open

// readFull reads into b until it is full or the file ends.
func readFull(f *os.File, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// scan lists the work tree's files in the index's order (by path, byte
// for byte), the harness's own left out; ok is false for a tree git must
// look at itself: a nested repository, a name git refuses to record, a
// file neither regular nor a symbolic link, or one past treecache's bounds.
func (r repo) scan(deadline time.Time) (files []scanned, ok bool) {
	var walk func(rel string) bool
	walk = func(rel string) bool {
		entries, err := os.ReadDir(filepath.Join(r.root, filepath.FromSlash(rel)))
		if err != nil {
			return false
		}
		for _, de := range entries {
			name := de.Name()
			if rel == "" && name == ".git" {
				continue
			}
			if refusedName(name) {
				return false
			}
			p := name
			if rel != "" {
				p = rel + "/" + name
			}
			if de.IsDir() {
				// Entered whatever its name: which of its files are the
				// harness's is said of each, as git's step for the
				// ignored files says it (root.IsHarnessFile).
				if !walk(p) {
					return false
				}
				continue
			}
			if root.IsHarnessFile(p) {
				continue
			}
			fi, err := de.Info()
			if err != nil || !fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0 {
				return false
			}
			if fi.Mode()&os.ModeSymlink != 0 && strings.HasPrefix(strings.ToLower(name), ".git") {
				return false // git refuses a link named .gitmodules and the like
			}
			if files = append(files, scanned{path: p, fi: fi}); len(files) > maxScanned || len(files)%256 == 0 && time.Now().After(deadline) {
				return false
			}
		}
		return true
	}
	if !walk("") {
		return nil, false
	}
	slices.SortFunc(files, func(a, b scanned) int { return strings.Compare(a.path, b.path) })
	return files, true
}

// maxScanned bounds the files scan lists, as treecache bounds its walk.
const maxScanned = 20000

// refusedName reports whether git would not record a path with this
// component as a file of the tree (its verify_path, with the NTFS and HFS
// protections on): .git in any case, followed by dots, spaces or a colon,
// its short name git~1, a backslash, and .git spelt with the characters
// HFS ignores. Such a tree goes to git, which decides; a few names git
// would take (.git.old) go to it too.
func refusedName(name string) bool {
	if strings.ContainsRune(name, '\\') {
		return true
	}
	lower := strings.ToLower(strings.Map(func(r rune) rune {
		if hfsIgnored(r) {
			return -1
		}
		return r
	}, name))
	for _, dotgit := range []string{".git", "git~1"} {
		if rest, ok := strings.CutPrefix(lower, dotgit); ok && (rest == "" || strings.ContainsRune(" .:", rune(rest[0]))) {
			return true
		}
	}
	return false
}

// hfsIgnored reports whether HFS+ ignores r in a name (git's is_hfs_dotgit).
func hfsIgnored(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff
}
