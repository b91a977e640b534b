// Package gitobj reads what a repository's files say of HEAD's commit
// (its abbreviated hash and subject) without running git, and says when
// they do not say it for certain. It holds the object store's reading
// (zlib, pack indexes), linked only by the hooks that show HEAD.
package gitobj

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/safefile"
)

// HeadLine returns what `git log -1 --format='%h %s'` prints in the work
// tree holding dir (HEAD's abbreviated hash and its subject), read from
// the repository's files instead of a git process: a session start asks it
// each time, and a process costs more than the rest of the hook. ok is
// false wherever the answer is not certain from the files alone, and the
// caller then asks git: an unborn branch, a reftable, replace refs or
// grafts, a SHA-256 repository, a commit stored as a delta or behind an
// alternate, a multi-pack index, configuration that could change the
// output (core.abbrev, an output encoding, includes), git's own
// environment variables.
func HeadLine(dir string) (line string, ok bool) {
	r, ok := git.Plain(dir)
	if !ok || !plainConfig(r) {
		return "", false
	}
	oid, ok := r.Head()
	if !ok {
		return "", false
	}
	objects := filepath.Join(r.Common, "objects")
	store := readStore(objects)
	if store == nil {
		return "", false
	}
	defer store.close()
	body, ok := store.commit(oid)
	if !ok {
		return "", false
	}
	subject, ok := subjectOf(body)
	if !ok {
		return "", false
	}
	abbrev, ok := store.abbrev(oid)
	if !ok {
		return "", false
	}
	return abbrev + " " + subject, true
}

// plainConfig reports whether no configuration file git reads says
// anything that could change HeadLine's answer: the abbreviation's length,
// an output encoding or a signature shown, an include (which could say
// either), a reftable or another object format.
func plainConfig(r git.Repo) bool {
	return !r.ConfigMentions("abbrev", "encoding", "include", "objectformat", "refstorage", "showsignature")
}

// store is a repository's object directory: its loose objects and the
// index of each pack. Close releases the indexes' files.
type store struct {
	dir   string
	packs []*packIndex
}

// packIndex is a pack's .idx (version 2), looked up where it lies: only its
// fan-out table is read whole, and the hashes a binary search visits (a
// large repository's indexes run to hundreds of megabytes).
type packIndex struct {
	pack   string // the .pack file
	f      *os.File
	fanout [256]uint32
	n      int
	size   int64
}

const idxHeader = 8 + 256*4 // magic, version, fan-out

// maxPacks bounds the packs HeadLine looks in (each costs an open and a
// few reads); a repository with more, long without a gc, is left to git.
const maxPacks = 64

// readStore opens objects; nil when it holds something HeadLine does not
// read (alternates, a multi-pack index, an index of another version).
func readStore(objects string) *store {
	for _, p := range []string{"info/alternates", "pack/multi-pack-index"} {
		if _, err := os.Lstat(filepath.Join(objects, p)); err == nil {
			return nil
		}
	}
	s := &store{dir: objects}
	idxs, _ := filepath.Glob(filepath.Join(objects, "pack", "pack-*.idx"))
	if len(idxs) > maxPacks {
		return nil
	}
	for _, idx := range idxs {
		p, ok := openIndex(idx)
		if !ok {
			s.close()
			return nil
		}
		s.packs = append(s.packs, p)
	}
	return s
}

func openIndex(idx string) (*packIndex, bool) {
	f, err := safefile.Open(idx)
	if err != nil {
		return nil, false
	}
	p := &packIndex{pack: strings.TrimSuffix(idx, ".idx") + ".pack", f: f}
	var head [idxHeader]byte
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false
	}
	if _, err := f.ReadAt(head[:], 0); err != nil || !bytes.Equal(head[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		f.Close()
		return nil, false
	}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(head[8+i*4:])
		if i > 0 && p.fanout[i] < p.fanout[i-1] {
			f.Close()
			return nil, false
		}
	}
	p.n, p.size = int(p.fanout[255]), fi.Size()
	if p.size < int64(idxHeader)+int64(p.n)*28+40 {
		f.Close()
		return nil, false
	}
	return p, true
}

func (s *store) close() {
	for _, p := range s.packs {
		p.f.Close()
	}
}

// oidAt reads the hash at position i.
func (p *packIndex) oidAt(i int) ([20]byte, bool) {
	var oid [20]byte
	_, err := p.f.ReadAt(oid[:], int64(idxHeader)+int64(i)*20)
	return oid, err == nil
}

// find returns the position of oid, or where it would be; ok is false
// when the index cannot be read.
func (p *packIndex) find(oid [20]byte) (i int, found, ok bool) {
	lo := 0
	if oid[0] > 0 {
		lo = int(p.fanout[oid[0]-1])
	}
	hi := int(p.fanout[oid[0]])
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		at, ok := p.oidAt(mid)
		if !ok {
			return 0, false, false
		}
		if bytes.Compare(at[:], oid[:]) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < p.n {
		at, ok := p.oidAt(lo)
		if !ok {
			return 0, false, false
		}
		return lo, at == oid, true
	}
	return lo, false, true
}

// offset is the pack offset of the object at position i.
func (p *packIndex) offset(i int) (int64, bool) {
	var b [8]byte
	if _, err := p.f.ReadAt(b[:4], int64(idxHeader)+int64(p.n)*24+int64(i)*4); err != nil {
		return 0, false
	}
	v := binary.BigEndian.Uint32(b[:4])
	if v&0x80000000 == 0 {
		return int64(v), true
	}
	large := int64(idxHeader) + int64(p.n)*28 + int64(v&0x7fffffff)*8
	if large+8 > p.size-40 {
		return 0, false
	}
	if _, err := p.f.ReadAt(b[:], large); err != nil {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b[:])), true
}

// commit returns the body of commit oid, loose or whole in a pack.
func (s *store) commit(oid [20]byte) ([]byte, bool) {
	h := hex.EncodeToString(oid[:])
	if f, err := safefile.Open(filepath.Join(s.dir, h[:2], h[2:])); err == nil {
		defer f.Close()
		z, err := zlib.NewReader(f)
		if err != nil {
			return nil, false
		}
		data, err := io.ReadAll(io.LimitReader(z, 16<<20))
		if err != nil {
			return nil, false
		}
		body, ok := bytes.CutPrefix(data, []byte("commit "))
		if !ok {
			return nil, false
		}
		_, body, ok = bytes.Cut(body, []byte{0})
		return body, ok
	}
	for _, p := range s.packs {
		i, found, ok := p.find(oid)
		if !ok {
			return nil, false
		}
		if found {
			off, ok := p.offset(i)
			if !ok {
				return nil, false
			}
			return packedCommit(p.pack, off)
		}
	}
	return nil, false
}

// packedCommit reads the commit stored whole at off in pack; a delta (or
// anything else) is not read.
func packedCommit(pack string, off int64) ([]byte, bool) {
	f, err := safefile.Open(pack)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	r := bufio.NewReader(io.NewSectionReader(f, off, 1<<40))
	b, err := r.ReadByte()
	if err != nil || (b>>4)&7 != 1 { // 1: a commit, stored whole
		return nil, false
	}
	size := int64(b & 0x0f)
	for shift := 4; b&0x80 != 0; shift += 7 {
		if b, err = r.ReadByte(); err != nil || shift > 56 {
			return nil, false
		}
		size |= int64(b&0x7f) << shift
	}
	if size > 16<<20 {
		return nil, false
	}
	z, err := zlib.NewReader(r)
	if err != nil {
		return nil, false
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(z, body); err != nil {
		return nil, false
	}
	return body, true
}

// subjectOf is a commit's %s: the first paragraph of its message, each
// line without its trailing blanks, joined by spaces. ok is false for a
// message in another encoding than UTF-8 (git would convert it).
func subjectOf(body []byte) (string, bool) {
	headers, msg, found := bytes.Cut(body, []byte("\n\n"))
	if !found {
		headers, msg = body, nil
	}
	for _, h := range bytes.Split(headers, []byte("\n")) {
		if enc, ok := bytes.CutPrefix(h, []byte("encoding ")); ok && !strings.EqualFold(string(enc), "utf-8") && !strings.EqualFold(string(enc), "utf8") {
			return "", false
		}
	}
	lines := strings.Split(string(msg), "\n")
	i := 0
	for i < len(lines) && strings.TrimRight(lines[i], " \t\r\n\v\f") == "" {
		i++
	}
	var parts []string
	for ; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t\r\n\v\f")
		if l == "" {
			break
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, " "), true
}

// abbrev is oid as %h abbreviates it: git's automatic length for the
// count of packed objects (at least 7 hex digits), longer while another
// object, loose or packed, begins with the same digits.
func (s *store) abbrev(oid [20]byte) (string, bool) {
	count := 0
	for _, p := range s.packs {
		count += p.n
	}
	length := max((bits.Len(uint(count))+1)/2, 7) // msb(count)+1 bits, four to a hex digit, collisions at half of them
	h := hex.EncodeToString(oid[:])
	// The longest run of hex digits oid shares with another object.
	shared := 0
	for _, p := range s.packs {
		i, found, ok := p.find(oid)
		if !ok {
			return "", false
		}
		for _, j := range []int{i - 1, i, i + 1} {
			if j < 0 || j >= p.n || (found && j == i) {
				continue
			}
			other, ok := p.oidAt(j)
			if !ok {
				return "", false
			}
			if other != oid {
				shared = max(shared, commonHex(h, hex.EncodeToString(other[:])))
			}
		}
	}
	entries, err := os.ReadDir(filepath.Join(s.dir, h[:2]))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	for _, e := range entries {
		if other := h[:2] + e.Name(); len(other) == 40 && other != h && isHex(other) {
			shared = max(shared, commonHex(h, other))
		}
	}
	return h[:max(length, shared+1)], true
}

func commonHex(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
