package treecache

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/record"
)

// WalkAll is Walk that also hands back the files it listed, so that a
// caller that needs both (the shadow's checkpoint) walks once, and that
// does not stop at an entry changed at or after since: it walks the whole
// tree and says whether it met one (then its listing is no digest to
// keep).
//
// It reads the directories first, in Walk's order, then takes the files'
// stats, most of a walk's time, on several threads when there are many
// (parallelStats), then writes the listing as Walk writes it.
func WalkAll(top string, skip func(rel string, dir bool) bool, since time.Time) (t Tree, racy bool, err error) {
	w := &lister{top: top, skip: skip, since: since.UnixNano(), noted: !since.IsZero(), deadline: time.Now().Add(walkBudget)}
	if err := w.dir(""); err != nil {
		return Tree{}, false, err
	}
	if err := w.stat(); err != nil {
		return Tree{}, false, err
	}
	out := &walker{} // the listing, written as Walk writes it
	for _, it := range w.items {
		if it.kind != 'F' {
			out.b.WriteString(it.text)
			continue
		}
		f := w.files[it.file]
		st := record.StampOf(f.Info)
		racy = racy || w.noted && (st.ModNs >= w.since || st.CtimeNs >= w.since)
		out.file(f.Path, st, f.Info.Mode())
	}
	return Tree{Listing: out.listing(), Files: w.files, Nested: w.nested}, racy || w.racy, nil
}

// lister is WalkAll's first pass: the listing's entries in order, the
// files' stats left to take.
type lister struct {
	top      string
	skip     func(rel string, dir bool) bool
	since    int64
	noted    bool
	deadline time.Time
	n        int
	items    []item
	files    []File        // Info nil until stat
	entries  []os.DirEntry // the files' directory entries, for stat
	nested   bool
	racy     bool // a directory changed at or after since
}

// item is one entry of the listing: a file (its index in files) or the
// text of a directory's or a nested repository's line.
type item struct {
	kind byte
	file int
	text string
}

func (w *lister) dir(rel string) error {
	abs := filepath.Join(w.top, filepath.FromSlash(rel))
	if w.noted && !w.racy {
		if fi, err := os.Lstat(abs); err == nil {
			st := record.StampOf(fi)
			w.racy = st.ModNs >= w.since || st.CtimeNs >= w.since
		}
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			if rel != "" {
				w.items = append(w.items, item{kind: 'G', text: "G" + rel + "\x00" + git.HeadMark(abs) + "\x00"})
				w.nested = true
			}
			continue
		}
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		if w.n++; w.n > maxEntries || (w.n%256 == 0 && time.Now().After(w.deadline)) {
			return ErrTooBig
		}
		if e.IsDir() {
			if w.skip(p, true) {
				continue
			}
			w.items = append(w.items, item{kind: 'D', text: "D" + p + "\x00"})
			if err := w.dir(p); err != nil {
				return err
			}
			continue
		}
		if w.skip(p, false) {
			continue
		}
		w.items = append(w.items, item{kind: 'F', file: len(w.files)})
		w.files = append(w.files, File{Path: p})
		w.entries = append(w.entries, e)
	}
	return nil
}

// parallelStats is how many files make the stats worth several threads:
// below it, starting them costs more than they save.
const parallelStats = 512

// stat takes every file's stat (its directory entry's Info: an lstat).
func (w *lister) stat() error {
	threads := min(runtime.GOMAXPROCS(0), 8)
	if len(w.files) < parallelStats || threads < 2 {
		return w.statRange(0, len(w.files))
	}
	errs := make([]error, threads)
	var wg sync.WaitGroup
	chunk := (len(w.files) + threads - 1) / threads
	for k := range threads {
		lo, hi := k*chunk, min((k+1)*chunk, len(w.files))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = w.statRange(lo, hi)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *lister) statRange(lo, hi int) error {
	for i := lo; i < hi; i++ {
		fi, err := w.entries[i].Info()
		if err != nil {
			return err // gone since the directory was read: changing
		}
		w.files[i].Info = fi
	}
	return nil
}
