package shadow

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/adler32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/safefile"
)

// writeTree stores the shadow index's tree and returns its id, as `git
// write-tree` does, without starting it when the index is one this file
// reads whole: version 2 or 3, SHA-1, every entry at stage 0 without
// extended flags, and no extension but the cache of trees (TREE) and the
// untracked cache (UNTR). Anything else (a split index, version 4 or an
// index.threads set through GIT_CONFIG_PARAMETERS, a file whose lengths do
// not add up) is left to git.
//
// Like git, it hashes only the directories whose cached tree `git add`
// invalidated, writes the new trees as loose objects, and keeps them in the
// index's cache of trees. The index is rewritten with its entries and
// other extensions byte for byte and its modification time kept: git's
// check of racily clean entries, which compares their times with the
// index's, sees what it would have seen had the index not been touched.
func (r repo) writeTree() (string, error) {
	path := filepath.Join(r.dir, "index")
	ix, ok := readIndex(path)
	if !ok {
		return r.git(nil, "write-tree")
	}
	if ix.tree.count < 0 {
		if _, err := r.buildTree(ix.tree, ix.entries, ""); err != nil {
			if errors.Is(err, errShape) {
				return r.git(nil, "write-tree")
			}
			return "", err
		}
		if err := ix.write(path); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(ix.tree.oid[:]), nil
}

// errShape says the index does not hold what its cache of trees says; git
// decides.
var errShape = errors.New("shadow: the index's cached trees do not match its entries")

// index is what writeTree needs of an index file.
type index struct {
	data    []byte // the whole file, as read
	end     int    // where the entries end and the extensions begin
	entries []entry
	tree    *cacheTree
	untr    []byte // the untracked cache extension, whole, or nil
	mtime   time.Time
}

type entry struct {
	path string
	mode uint32
	oid  [20]byte
	// raw is the entry as the index file holds it (its fixed part, name
	// and padding): a slice of the file read, or new bytes.
	raw []byte
}

// stat is the entry's stat data (statData's layout).
func (e entry) stat() (sd [10]uint32) {
	for i := range sd {
		sd[i] = binary.BigEndian.Uint32(e.raw[4*i:])
	}
	return sd
}

// cacheTree is a node of the index's TREE extension: the tree of one
// directory and how many index entries it covers, -1 when git add
// invalidated it.
type cacheTree struct {
	name  string
	count int
	oid   [20]byte
	subs  []*cacheTree // in subtreeOrder, as git keeps them
}

const (
	entryFixed    = 62     // an entry's bytes before its name (64 with extended flags)
	flagExtended  = 0x4000 // the entry has a second word of flags
	flagStage     = 0x3000
	nameMask      = 0x0fff
	maxTreeDepth  = 4096
	indexTrailer  = 20
	indexHeader   = 12
	extHeaderSize = 8
)

// readIndex reads the index at path; ok is false for any index writeTree
// leaves to git.
func readIndex(path string) (*index, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<30 {
		return nil, false
	}
	data, err := safefile.ReadFile(path, 1<<30)
	if err != nil || len(data) < indexHeader+indexTrailer || string(data[:4]) != "DIRC" {
		return nil, false
	}
	version := binary.BigEndian.Uint32(data[4:])
	if version != 2 && version != 3 {
		return nil, false
	}
	// The checksum is not checked, as git does not check it when it reads
	// an index: this one was written by the git add just before, under the
	// checkpoint's lock, and hashing it again would double the cost of a
	// large index. Every length in it is checked against the file's.
	body := len(data) - indexTrailer
	n := int(binary.BigEndian.Uint32(data[8:]))
	ix := &index{data: data, mtime: fi.ModTime(), entries: make([]entry, 0, min(n, body/entryFixed))}
	off := indexHeader
	for range n {
		if off+entryFixed > body {
			return nil, false
		}
		flags := binary.BigEndian.Uint16(data[off+60:])
		start := off + entryFixed
		if flags&flagExtended != 0 || flags&flagStage != 0 {
			return nil, false // intent to add, skip-worktree, a conflict
		}
		nul := bytes.IndexByte(data[start:body], 0)
		if nul < 0 || (int(flags&nameMask) != nameMask && nul != int(flags&nameMask)) {
			return nil, false
		}
		size := (entryFixed + nul + 8) &^ 7
		if off+size > body {
			return nil, false
		}
		e := entry{path: string(data[start : start+nul]), mode: binary.BigEndian.Uint32(data[off+24:]), raw: data[off : off+size : off+size]}
		copy(e.oid[:], data[off+40:off+60])
		if e.path == "" || !validMode(e.mode) {
			return nil, false
		}
		ix.entries = append(ix.entries, e)
		off += size
	}
	if off > body {
		return nil, false
	}
	ix.end = off
	for off < body {
		if off+extHeaderSize > body {
			return nil, false
		}
		size := int(binary.BigEndian.Uint32(data[off+4:]))
		if size > body-off-extHeaderSize {
			return nil, false
		}
		ext := data[off : off+extHeaderSize+size]
		switch string(ext[:4]) {
		case "TREE":
			t, rest, ok := parseCacheTree(ext[extHeaderSize:], 0)
			if !ok || len(rest) != 0 || ix.tree != nil {
				return nil, false
			}
			ix.tree = t
		case "UNTR":
			ix.untr = ext
		default:
			return nil, false
		}
		off += len(ext)
	}
	if ix.tree == nil {
		ix.tree = &cacheTree{count: -1}
	}
	return ix, true
}

func validMode(m uint32) bool {
	switch m {
	case 0o100644, 0o100755, 0o120000, 0o160000:
		return true
	}
	return false
}

// parseCacheTree reads one node of the TREE extension and its subtrees:
// "name\0count subtrees\n", the tree's id when count is not -1, then the
// subtrees.
func parseCacheTree(b []byte, depth int) (*cacheTree, []byte, bool) {
	if depth > maxTreeDepth {
		return nil, nil, false
	}
	nul := bytes.IndexByte(b, 0)
	if nul < 0 {
		return nil, nil, false
	}
	t := &cacheTree{name: string(b[:nul])}
	b = b[nul+1:]
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil, nil, false
	}
	count, subs, found := strings.Cut(string(b[:nl]), " ")
	c, err1 := strconv.Atoi(count)
	s, err2 := strconv.Atoi(subs)
	if !found || err1 != nil || err2 != nil || c < -1 || s < 0 || s > len(b) {
		return nil, nil, false
	}
	t.count = c
	b = b[nl+1:]
	if c >= 0 {
		if len(b) < 20 {
			return nil, nil, false
		}
		copy(t.oid[:], b[:20])
		b = b[20:]
	}
	for range s {
		sub, rest, ok := parseCacheTree(b, depth+1)
		if !ok {
			return nil, nil, false
		}
		t.subs = append(t.subs, sub)
		b = rest
	}
	return t, b, true
}

// buildTree computes the tree t of the entries under the directory base
// (entries[0] is its first), writes what is new, and returns how many
// entries it covers. A node still valid is trusted as git trusts it, once
// its bounds agree with the entries.
func (r repo) buildTree(t *cacheTree, entries []entry, base string) (int, error) {
	if t.count >= 0 && coversExactly(entries, t.count, base) {
		return t.count, nil
	}
	var body []byte
	var used []*cacheTree
	i := 0
	for i < len(entries) {
		path := entries[i].path
		if !strings.HasPrefix(path, base) {
			break
		}
		rest := path[len(base):]
		if slash := strings.IndexByte(rest, '/'); slash >= 0 {
			name := rest[:slash]
			if name == "" {
				return 0, errShape
			}
			sub := t.sub(name)
			n, err := r.buildTree(sub, entries[i:], base+name+"/")
			if err != nil {
				return 0, err
			}
			if n == 0 {
				return 0, errShape
			}
			body = append(body, "40000 "...)
			body = append(body, name...)
			body = append(body, 0)
			body = append(body, sub.oid[:]...)
			used = append(used, sub)
			i += n
			continue
		}
		body = strconv.AppendUint(body, uint64(entries[i].mode), 8)
		body = append(body, ' ')
		body = append(body, rest...)
		body = append(body, 0)
		body = append(body, entries[i].oid[:]...)
		i++
	}
	oid, err := r.writeObject("tree", body)
	if err != nil {
		return 0, err
	}
	slices.SortFunc(used, func(a, b *cacheTree) int { return subtreeOrder(a.name, b.name) })
	t.oid, t.count, t.subs = oid, i, used
	return i, nil
}

// coversExactly reports whether the first n entries are under base and the
// one after them is not.
func coversExactly(entries []entry, n int, base string) bool {
	if n == 0 || n > len(entries) || !strings.HasPrefix(entries[n-1].path, base) {
		return false
	}
	return n == len(entries) || !strings.HasPrefix(entries[n].path, base)
}

// sub is the cached subtree name, found as git finds it (a binary search
// in its order), or a new one to compute. Subtrees out of that order (a
// hand-made index) are only missed, and computed again.
func (t *cacheTree) sub(name string) *cacheTree {
	if i, found := slices.BinarySearchFunc(t.subs, name, func(s *cacheTree, name string) int { return subtreeOrder(s.name, name) }); found {
		return t.subs[i]
	}
	return &cacheTree{name: name, count: -1}
}

// subtreeOrder is the order of the subtrees in the TREE extension: by
// length of name, then bytes (git's subtree_name_cmp).
func subtreeOrder(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// appendTo writes the node and its subtrees as the TREE extension holds
// them.
func (t *cacheTree) appendTo(b []byte) []byte {
	b = append(b, t.name...)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(t.count), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(t.subs)), 10)
	b = append(b, '\n')
	if t.count >= 0 {
		b = append(b, t.oid[:]...)
	}
	for _, s := range t.subs {
		b = s.appendTo(b)
	}
	return b
}

// write puts the index back with its new cache of trees: the header and
// entries as read, TREE, the untracked cache, and the checksum, through
// index.lock (git's own lock name: a git started meanwhile waits or fails
// rather than read half a file), its modification time kept.
func (ix *index) write(path string) error {
	out := make([]byte, 0, len(ix.data)+256)
	out = append(out, ix.data[:ix.end]...)
	return ix.writeWith(path, out, true)
}

// writeWith writes the index whose header and entries are head, followed
// by the cache of trees, the untracked cache when there is one, and the
// checksum; keepTime keeps the modification time of the index as read.
func (ix *index) writeWith(path string, head []byte, keepTime bool) error {
	out := head
	tree := ix.tree.appendTo(nil)
	out = append(out, "TREE"...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(tree)))
	out = append(out, tree...)
	out = append(out, ix.untr...)
	sum := digest.SHA1(out)
	out = append(out, sum[:]...)
	lock := path + ".lock"
	if err := writeNew(lock, out); err != nil {
		os.Remove(lock)
		return err
	}
	if keepTime {
		if err := os.Chtimes(lock, ix.mtime, ix.mtime); err != nil {
			os.Remove(lock)
			return err
		}
	}
	if err := os.Rename(lock, path); err != nil {
		os.Remove(lock)
		return err
	}
	return nil
}

// writeObject stores a loose object of the kind with body, as git does
// (its header and body hashed, in a zlib stream, renamed into place), and
// returns its id. An object already there loose is only freshened, as git does, so
// that a collection running meanwhile does not prune it as old.
func (r repo) writeObject(kind string, body []byte) ([20]byte, error) {
	obj, sum := object(kind, body)
	return sum, r.store(obj, sum)
}

// object is the object of the kind with body, as git hashes and stores it
// (its header and body), and its id.
func object(kind string, body []byte) ([]byte, [20]byte) {
	obj := append(strconv.AppendInt([]byte(kind+" "), int64(len(body)), 10), 0)
	obj = append(obj, body...)
	return obj, digest.SHA1(obj)
}

// store writes obj, whose id is sum, as a loose object (see writeObject).
func (r repo) store(obj []byte, sum [20]byte) error {
	oid := hex.EncodeToString(sum[:])
	path := filepath.Join(r.dir, "objects", oid[:2], oid[2:])
	if _, err := os.Lstat(path); err == nil {
		now := time.Now()
		os.Chtimes(path, now, now)
		return nil
	}
	// Created read-only as git makes its objects (a descriptor opened for
	// writing writes all the same), under a name git's prune collects if
	// the hook dies before the rename: one metadata change fewer than a
	// chmod after the write.
	tmp := filepath.Join(filepath.Dir(path), "tmp_obj_"+strconv.Itoa(os.Getpid())+"_"+strconv.FormatUint(tmpSeq.Add(1), 10)+"_"+strconv.FormatInt(time.Now().UnixNano(), 36))
	var f *os.File
	err := inDir(filepath.Dir(path), func() (err error) {
		f, err = os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
		return err
	})
	if err != nil {
		return err
	}
	_, werr := f.Write(stored(obj))
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// tmpSeq tells apart the temporary files of one process, whatever the
// clock's resolution.
var tmpSeq atomic.Uint64

// stored is data as a zlib stream of stored (uncompressed) deflate blocks,
// what git writes with core.looseCompression=0. A checkpoint's loose
// objects are small trees and a commit, mostly object ids that do not
// compress, and gc packs them compressed; a compressor would cost more
// than the rest of writing them (compress/flate's writer allocates and
// clears some 650 KB for each stream).
func stored(data []byte) []byte {
	const maxBlock = 65535
	sum := adler32.Checksum(data)
	out := make([]byte, 0, len(data)+len(data)/maxBlock*5+11)
	out = append(out, 0x78, 0x01) // deflate, 32 KB window, no dictionary, fastest
	for {
		n := min(len(data), maxBlock)
		final := byte(0)
		if n == len(data) {
			final = 1
		}
		out = append(out, final, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		out = append(out, data[:n]...)
		data = data[n:]
		if final == 1 {
			break
		}
	}
	return binary.BigEndian.AppendUint32(out, sum)
}
