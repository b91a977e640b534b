package shadow

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/treecache"
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
// their files). An index git wrote is read as git reads it: an entry whose
// file changed in the second the index was written, or later, is hashed
// again, whatever its stat says.
func (r repo) addInProcess(walked []treecache.File, ours bool) (done bool, err error) {
	path := filepath.Join(r.dir, "index")
	ix, ok := readIndex(path)
	if !ok {
		return false, nil
	}
	files, ok := recordable(walked)
	if !ok {
		return false, nil
	}
	plan, changed, ok := planAdd(ix, files, ours)
	if !ok || !changed {
		return ok, nil
	}
	entries, moved, reshaped, err := r.apply(plan)
	if errors.Is(err, errMovedUnderRead) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	for _, p := range moved {
		ix.tree.invalidate(p)
	}
	if _, err := r.buildTree(ix.tree, entries, ""); err != nil {
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
	head = binary.BigEndian.AppendUint32(head, uint32(len(entries)))
	for _, e := range entries {
		head = append(head, e.raw...)
	}
	ix.entries = entries
	return true, ix.writeWith(path, head, false)
}

// step is what the add does for one path: keep its entry, drop it (the
// file is gone), or read and hash the file.
type step struct {
	e    *entry          // the index's entry, nil for a new file
	f    *treecache.File // the file, nil for one removed
	sd   [10]uint32      // the file's stat data
	hash bool            // the file is read and hashed
}

// planAdd decides each path's step from the stats alone, so that a tree
// left to git costs no file read: ok is false for one (see addInProcess),
// changed says whether anything is to be written.
func planAdd(ix *index, files []treecache.File, ours bool) (plan []step, changed, ok bool) {
	plan = make([]step, 0, len(files)+1)
	hashed := 0
	// An entry of git's is trusted as git trusts it: when its file was
	// changed before the second in which the index was written (a racily
	// clean entry otherwise: a second change within the same tick can
	// leave the stat as it was), git's rule without nanoseconds, the
	// stricter of its builds.
	racyFrom := ix.mtime.Unix()
	i, j := 0, 0
	for i < len(ix.entries) || j < len(files) {
		var st step
		switch {
		case j == len(files) || i < len(ix.entries) && ix.entries[i].path < files[j].Path:
			st.e = &ix.entries[i]
			i++
		case i == len(ix.entries) || files[j].Path < ix.entries[i].path:
			st.f = &files[j]
			j++
		default:
			st.e, st.f = &ix.entries[i], &files[j]
			i, j = i+1, j+1
		}
		if st.e != nil && st.e.mode == 0o160000 {
			return nil, false, false // a submodule's entry: git's to keep
		}
		if st.f == nil {
			plan, changed = append(plan, st), true
			continue
		}
		sd, ok := statData(st.f.Info, gitMode(st.f.Info))
		if !ok {
			return nil, false, false
		}
		st.sd = sd
		if st.e == nil || !sameStat(st.e.stat(), sd) || !ours && int64(sd[2]) >= racyFrom {
			if st.f.Info.Size() > MaxIgnored {
				return nil, false, false // whether it is ignored decides: git's rules
			}
			if hashed++; hashed > maxHashed {
				return nil, false, false
			}
			st.hash, changed = true, true
		}
		plan = append(plan, st)
	}
	return plan, changed, true
}

// apply carries the plan out: the files to hash read, their new blobs
// stored, and the index's new entries. moved lists the paths whose entry
// came, went, or changed its blob or mode (their cached trees go);
// reshaped says entries came or went (the untracked cache goes).
func (r repo) apply(plan []step) (entries []entry, moved []string, reshaped bool, err error) {
	entries = make([]entry, 0, len(plan))
	for _, st := range plan {
		switch {
		case st.f == nil:
			moved, reshaped = append(moved, st.e.path), true
			continue
		case !st.hash:
			entries = append(entries, *st.e)
			continue
		}
		obj, oid, ok := r.read(st.f)
		if !ok {
			return nil, nil, false, errMovedUnderRead
		}
		if st.e == nil || st.e.oid != oid {
			// (An entry's own blob is in the repository already, perhaps
			// packed, where a loose copy would only double it.)
			if err := r.store(obj, oid); err != nil {
				return nil, nil, false, err
			}
		}
		sd := st.sd
		if mt := modTime(sd); !mt.Before(time.Now().Add(-racyWindow(mt))) {
			sd[9] = 0 // smudged, as git does a racily clean entry: hashed again next time
		}
		mode := sd[6]
		if st.e == nil || st.e.oid != oid || st.e.mode != mode {
			moved = append(moved, st.f.Path)
			reshaped = reshaped || st.e == nil
		}
		entries = append(entries, newEntry(st.f.Path, mode, oid, sd))
	}
	return entries, moved, reshaped, nil
}

// errMovedUnderRead says a file changed while the add read it: git
// decides.
var errMovedUnderRead = errors.New("shadow: a file changed under its read")

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

// gitMode is the mode git records for a file of this mode.
func gitMode(fi os.FileInfo) uint32 {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return 0o120000
	case fi.Mode().Perm()&0o100 != 0:
		return 0o100755
	}
	return 0o100644
}

// read is the file's blob and its id; ok is false when the file changed
// under the read (git decides).
func (r repo) read(f *treecache.File) (obj []byte, oid [20]byte, ok bool) {
	abs := filepath.Join(r.root, filepath.FromSlash(f.Path))
	var data []byte
	if f.Info.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(abs)
		if err != nil {
			return nil, oid, false
		}
		data = []byte(target)
	} else {
		// Not an os.Open: the file may have been swapped for a FIFO since
		// the walk, whose open would wait for a writer.
		var err error
		if data, err = readFile(abs, MaxIgnored); err != nil {
			return nil, oid, false
		}
	}
	if int64(len(data)) != f.Info.Size() {
		return nil, oid, false
	}
	obj, oid = object("blob", data)
	return obj, oid, true
}

// readFile is safefile.ReadFile (a variable for the tests, which count
// the files read).
var readFile = safefile.ReadFile

// recordable is the walked files in the index's order (by path, byte for
// byte; the slice is sorted in place); ok is false for a tree git must look at itself: a name git refuses
// to record, a file neither regular nor a symbolic link, a link git would
// not take. (The walk leaves out the repository, a nested one's files and
// the harness's files, as the checkpoints do.)
func recordable(files []treecache.File) ([]treecache.File, bool) {
	for _, f := range files {
		mode := f.Info.Mode()
		if !mode.IsRegular() && mode&os.ModeSymlink == 0 {
			return nil, false
		}
		for rest := f.Path; rest != ""; {
			var name string
			name, rest, _ = strings.Cut(rest, "/")
			if refusedName(name) {
				return nil, false
			}
			if rest == "" && mode&os.ModeSymlink != 0 && strings.HasPrefix(strings.ToLower(name), ".git") {
				return nil, false // git refuses a link named .gitmodules and the like
			}
		}
	}
	slices.SortFunc(files, func(a, b treecache.File) int { return strings.Compare(a.Path, b.Path) })
	return files, true
}

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
