package treecache

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"time"

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
func WalkAll(top string, skip func(rel string, dir bool) bool, since time.Time) (tree Tree, racy bool, err error) {
	var (
		items   []item
		files   []File        // Info nil until stat
		entries []os.DirEntry // the files' directory entries, for stat
	)
	t := traversal{
		top: top, skip: skip, deadline: time.Now().Add(walkBudget),
		enter: func(abs string) error {
			if !racy && !since.IsZero() {
				if fi, err := os.Lstat(abs); err == nil {
					racy = record.StampOf(fi).ChangedSince(since)
				}
			}
			return nil
		},
		line: func(kind byte, text string) {
			items = append(items, item{text: text})
			tree.Nested = tree.Nested || kind == 'G'
		},
		file: func(p string, e os.DirEntry) error {
			items = append(items, item{file: len(files)})
			files = append(files, File{Path: p})
			entries = append(entries, e)
			return nil
		},
	}
	if err := t.dir(""); err != nil {
		return Tree{}, false, err
	}
	if err := stat(files, entries); err != nil {
		return Tree{}, false, err
	}
	var out lines
	for _, it := range items {
		if it.text != "" {
			out.b.WriteString(it.text)
			continue
		}
		f := files[it.file]
		st := record.StampOf(f.Info)
		racy = racy || st.ChangedSince(since)
		out.file(f.Path, st, f.Info.Mode())
	}
	tree.Listing, tree.Files = out.sum(), files
	return tree, racy, nil
}

// item is one line of the listing: a file's (its index in the files) or
// the text of a directory's or a nested repository's.
type item struct {
	file int
	text string // "" for a file
}

// parallelStats is how many files make the stats worth several threads:
// below it, starting them costs more than they save.
const parallelStats = 512

// stat takes every file's stat (its directory entry's Info: an lstat), on
// several threads past parallelStats files.
func stat(files []File, entries []os.DirEntry) error {
	threads := min(runtime.GOMAXPROCS(0), 8)
	if len(files) < parallelStats || threads < 2 {
		return statRange(files, entries, 0, len(files))
	}
	errs := make([]error, threads)
	var wg sync.WaitGroup
	chunk := (len(files) + threads - 1) / threads
	for k := range threads {
		lo, hi := k*chunk, min((k+1)*chunk, len(files))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = statRange(files, entries, lo, hi)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func statRange(files []File, entries []os.DirEntry, lo, hi int) error {
	for i := lo; i < hi; i++ {
		fi, err := entries[i].Info()
		if err != nil {
			return err // gone since the directory was read: changing
		}
		files[i].Info = fi
	}
	return nil
}
