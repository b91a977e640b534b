// Package treecache knows whether a work tree is still as `git status`
// last described it, from the files' stat alone, the way git's own index
// knows a file is unchanged: a session start then gives the tree's state
// without a git process when nothing moved since the last one.
//
// What git's answer rests on is kept as one digest: HEAD's commit, the
// index's stat, the configuration and exclude files' stat, and for every
// directory git walked (ignored ones left out, as git reported them) the
// names in it and each file's stat (size, times to the nanosecond, inode,
// mode). When the digest taken now is the kept one, nothing git looks at
// has changed, and the kept answer is the answer. When it differs, git is
// asked and its answer kept again, unless something it rests on changed
// in the two seconds before git ran or while it did (a file written within
// one tick of the clock keeps its time: git calls such entries "racily
// clean"), in which case nothing is kept and the next call asks git again.
package treecache

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/safefile"
)

// maxEntries bounds the files and directories one digest covers: past it,
// git's own parallel stat is the better tool, and nothing is kept. A
// variable for the tests.
var maxEntries = 20000

// racyWindow is how recent a change must be for the digest to distrust
// it: the coarsest file times in use (FAT's two seconds) included. A
// variable for the tests.
var racyWindow = 2 * time.Second

const magic = "harness-tree 1"

// walkBudget bounds one walk's time (a tree on a slow file system): past
// it, git is asked and nothing is kept, as for too many entries.
var walkBudget = 500 * time.Millisecond

// Changes is git.Changes(dir, stateRoot): the paths that differ from HEAD,
// the harness's own files left out. file keeps the last answer and its
// digest ("": nothing is kept, git is asked).
func Changes(dir, stateRoot, file string) ([]string, error) {
	top, err := git.Top(dir)
	if err != nil || file == "" {
		return git.Changes(dir, stateRoot)
	}
	repo, ok := git.Plain(top)
	if !ok || hasSubmodules(top) {
		return git.Changes(dir, stateRoot)
	}
	if tooBig(file) {
		return git.Changes(dir, stateRoot)
	}
	before, beforeOK := repoState(repo)
	// The tree as it is now, when it changed since the last answer: no
	// entry in it changed in the last two seconds, so it serves as the
	// digest of git's new answer (below) instead of a second walk. A
	// change made between this walk and git's run only makes the next
	// call's digest differ, and ask git again. A walk that meets an entry
	// that recent has found a change (the kept digest was kept only when
	// none was that recent after its own git run).
	prev, havePrev := read(file)
	var listing string
	if havePrev && beforeOK {
		l, racy, err := walkAsGit(top, stateRoot, prev.ignored, time.Now().Add(-racyWindow))
		if err == nil && !racy {
			if Salt(saltOf(top, stateRoot, before), l) == prev.sum {
				return prev.changes, nil
			}
			listing = l
		}
	}
	t0 := time.Now()
	changes, ignored, err := git.ChangesIgnored(dir, stateRoot)
	if err != nil {
		return nil, err
	}
	// Kept only when the repository did not move while git ran and no
	// entry changed close enough to it to hide a change in its time; else
	// the old answer goes, so that no later call walks the tree for it.
	if after, ok := repoState(repo); beforeOK && ok && after == before {
		var racy bool
		if listing == "" || !slices.Equal(ignored, prev.ignored) {
			// No walk before git, or one that left out other paths.
			listing, racy, err = walkAsGit(top, stateRoot, ignored, t0.Add(-racyWindow))
		}
		switch {
		case errors.Is(err, ErrTooBig):
			// Said once a day at most: each session start would
			// otherwise walk the tree up to the bound for nothing.
			atomicfile.Replace(file, []byte(magic+"\x00"+bigMark+"\x00"), 0o600)
			return changes, nil
		case err == nil && !racy:
			write(file, kept{sum: Salt(saltOf(top, stateRoot, after), listing), ignored: ignored, changes: changes})
			return changes, nil
		}
	}
	os.Remove(file)
	return changes, nil
}

// bigMark, in place of the digest, says the tree was too large to walk;
// tried again a day later.
const bigMark = "too-big"

// tooBig reports whether file says, since less than a day, that the tree
// is too large to walk.
func tooBig(file string) bool {
	fi, err := os.Lstat(file)
	if err != nil || fi.Size() != int64(len(magic)+len(bigMark)+2) || time.Since(fi.ModTime()) > 24*time.Hour {
		return false
	}
	data, err := safefile.ReadFile(file, safefile.Small)
	return err == nil && string(data) == magic+"\x00"+bigMark+"\x00"
}

// hasSubmodules reports whether the tree has submodules: their trees'
// changes are git's answer too, and the digest does not walk into them.
func hasSubmodules(top string) bool {
	_, err := os.Lstat(filepath.Join(top, ".gitmodules"))
	return err == nil
}

// repoState is what of the repository git's answer rests on: HEAD's commit,
// the index's stat, and the stat of every configuration, exclude and
// attributes file git reads. ok is false when HEAD cannot be read from the
// files, or when a configuration names its own excludes or attributes file
// (the digest would have to follow it).
func repoState(r git.Repo) (string, bool) {
	head, ok := r.HeadOid()
	if !ok || r.ConfigMentions("excludesfile", "attributesfile", "include") {
		return "", false
	}
	var b strings.Builder
	b.WriteString(head)
	files := append(r.ConfigFiles(), filepath.Join(r.GitDir, "index"),
		filepath.Join(r.Common, "info", "exclude"), filepath.Join(r.Common, "info", "attributes"))
	if u := git.UserDir(); u != "" {
		files = append(files, filepath.Join(u, "ignore"), filepath.Join(u, "attributes"))
	}
	for _, f := range files {
		fi, err := os.Lstat(f)
		b.WriteString("\x00")
		switch {
		case errors.Is(err, fs.ErrNotExist):
			b.WriteString("-")
			continue
		case err != nil:
			return "", false
		}
		b.WriteString(record.StampOf(fi).String())
	}
	return b.String(), true
}

// walkAsGit walks the tree as git did (its ignored paths, the repository
// and the harness's files left out): Walk's listing of every entry's name
// and stat.
func walkAsGit(top, stateRoot string, ignored []string, since time.Time) (listing string, racy bool, err error) {
	skip := map[string]bool{}
	for _, p := range ignored {
		skip[p] = true
	}
	return walkTree(top, func(p string, dir bool) bool {
		if dir {
			p += "/"
		}
		return skip[p] || git.OwnedByHarness(top, strings.TrimSuffix(p, "/"), stateRoot)
	}, since)
}

// walkTree is Walk (a variable for the tests, which count the walks).
var walkTree = Walk

// saltOf is what a listing is salted with for the tree top of the state
// root stateRoot in the repository's state rs (repoState).
func saltOf(top, stateRoot, rs string) string {
	return magic + "\x00" + top + "\x00" + stateRoot + "\x00" + rs
}

// ErrTooBig is Digest's answer for a tree of more than 20,000 entries, or
// one that took longer than half a second to walk.
var ErrTooBig = errors.New("too many entries, or too slow to walk")

// Digest is a digest of the work tree under top: salt, then the name of
// every entry, and each file's stat (size, times to the nanosecond, inode,
// mode), in the order of a walk sorted by name. The repository (.git) and
// what skip names (a path relative to top, with '/'; dir says it is a
// directory, which is then not entered) are left out; a nested
// repository's HEAD is in. Two
// digests are equal when nothing under top changed between them, except a
// file rewritten within one tick of the clock at the same size: with since
// set, racy says whether any entry (or directory) changed at or after it,
// and such a digest should not be kept: the walk stops at the first such
// entry (a step's change, just made, is the usual case) and sum is "".
func Digest(top, salt string, skip func(rel string, dir bool) bool, since time.Time) (sum string, racy bool, err error) {
	listing, racy, err := Walk(top, skip, since)
	if err != nil || racy {
		return "", racy, err
	}
	return Salt(salt, listing), false, nil
}

// Walk is Digest before its salt: the digest of the listing alone, which
// Salt turns into Digest's for any salt. A caller that walked before
// knowing its salt (the shadow, before git names the tree) walks once.
func Walk(top string, skip func(rel string, dir bool) bool, since time.Time) (listing string, racy bool, err error) {
	var out lines
	t := traversal{
		top: top, skip: skip, deadline: time.Now().Add(walkBudget),
		enter: func(abs string) error {
			if !since.IsZero() {
				if fi, err := os.Lstat(abs); err == nil && record.StampOf(fi).ChangedSince(since) {
					return errRacy
				}
			}
			return nil
		},
		line: func(_ byte, text string) { out.b.WriteString(text) },
		file: func(p string, e os.DirEntry) error {
			fi, err := e.Info()
			if err != nil {
				return err // gone since the directory was read: changing
			}
			st := record.StampOf(fi)
			if st.ChangedSince(since) {
				return errRacy
			}
			out.file(p, st, fi.Mode())
			return nil
		},
	}
	if err := t.dir(""); errors.Is(err, errRacy) {
		return "", true, nil
	} else if err != nil {
		return "", false, err
	}
	return out.sum(), false, nil
}

// Tree is what WalkAll found.
type Tree struct {
	Listing string // Walk's listing
	Files   []File // every file listed, in the walk's order (by name within a directory)
	Nested  bool   // a directory below the top holds a repository of its own
}

// File is one file of a walk: its path under the top, with '/', and its
// lstat.
type File struct {
	Path string
	Info os.FileInfo
}

// Salt is Digest's value for salt and a listing from Walk.
func Salt(salt, listing string) string {
	d := digest.SHA256([]byte(salt + "\x00" + listing))
	return hex.EncodeToString(d[:])
}

// traversal is the walk Walk and WalkAll share: every entry under top in
// the listing's order (by name within a directory), the repository left
// out and a nested one's line in, what skip names left out, bounded in
// entries and in time. Its hooks say what a walk does with a directory
// before its entries are read (enter), with a line of the listing that is
// not a file's (a directory's, 'D'; a nested repository's, 'G'), and with
// a file; an error from one stops the walk.
type traversal struct {
	top      string
	skip     func(rel string, dir bool) bool
	deadline time.Time
	n        int
	enter    func(abs string) error
	line     func(kind byte, text string)
	file     func(p string, e os.DirEntry) error
}

// dir walks the directory rel (relative to the top, "" for the top) and
// everything under it that is not skipped.
func (t *traversal) dir(rel string) error {
	abs := filepath.Join(t.top, filepath.FromSlash(rel))
	if err := t.enter(abs); err != nil {
		return err
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			// The repository, not its work. A nested one's HEAD counts:
			// git records such a directory by its commit.
			if rel != "" {
				t.line('G', "G"+rel+"\x00"+git.HeadMark(abs)+"\x00")
			}
			continue
		}
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		if t.n++; t.n > maxEntries || (t.n%256 == 0 && time.Now().After(t.deadline)) {
			return ErrTooBig
		}
		if e.IsDir() {
			if t.skip(p, true) {
				continue
			}
			t.line('D', "D"+p+"\x00")
			if err := t.dir(p); err != nil {
				return err
			}
			continue
		}
		if t.skip(p, false) {
			continue
		}
		if err := t.file(p, e); err != nil {
			return err
		}
	}
	return nil
}

// lines is a listing as a walk writes it, digested at the end.
type lines struct {
	b   bytes.Buffer
	num []byte // an entry's bytes, reused
}

// file adds a file's entry: its name, its stamp (record.Stamp's text)
// and its mode in octal, written into the listing directly (a walk of
// 10,000 files made 90,000 small strings).
func (l *lines) file(p string, st record.Stamp, mode os.FileMode) {
	b := append(l.num[:0], 'F')
	b = append(b, p...)
	b = append(b, 0)
	b = st.AppendTo(b)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(mode), 8)
	l.num = append(b, 0)
	l.b.Write(l.num)
}

// sum is the digest of the listing.
func (l *lines) sum() string {
	d := digest.SHA256(l.b.Bytes())
	return hex.EncodeToString(d[:])
}

// errRacy stops a walk that found an entry changed at or after since.
var errRacy = errors.New("changed within the racy window")

// kept is the file's content: the digest, the ignored paths git reported
// (the next walk leaves them out too) and git's answer.
type kept struct {
	sum              string
	ignored, changes []string
}

// read parses the kept answer; ok is false for a missing or damaged file.
func read(file string) (k kept, ok bool) {
	data, err := safefile.ReadFile(file, 8<<20)
	if err != nil {
		return k, false
	}
	f := strings.Split(string(data), "\x00")
	if len(f) < 4 || f[0] != magic {
		return k, false
	}
	k.sum, f = f[1], f[2:]
	list := func() ([]string, bool) {
		if len(f) == 0 {
			return nil, false
		}
		n, err := strconv.Atoi(f[0])
		if err != nil || n < 0 || n > len(f)-1 {
			return nil, false
		}
		var l []string // nil when empty, as git.Changes says "no change"
		if n > 0 {
			l = f[1 : 1+n]
		}
		f = f[1+n:]
		return l, true
	}
	if k.ignored, ok = list(); !ok {
		return k, false
	}
	if k.changes, ok = list(); !ok {
		return k, false
	}
	return k, len(k.sum) == 64
}

// write keeps k in file, whole or not at all; a failure only costs the
// next call a git process.
func write(file string, k kept) {
	var b strings.Builder
	b.WriteString(magic + "\x00" + k.sum + "\x00")
	for _, l := range [][]string{k.ignored, k.changes} {
		b.WriteString(strconv.Itoa(len(l)) + "\x00")
		for _, p := range l {
			b.WriteString(p + "\x00")
		}
	}
	_ = atomicfile.Replace(file, []byte(b.String()), 0o600)
}
