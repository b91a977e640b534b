// Package atomicfile replaces a file in one step: a reader sees the old
// bytes or the new ones, never a mix, and a crash leaves one or the other.
//
// The temporary file is written in the target's own directory, named
// ".<name><digits>": renameio alone would use $TMPDIR when it is on the same
// file system, and a $TMPDIR inside a project would show the half-written
// file to git (a dirty tree) and to anyone listing the project. Beside the
// target, a ".harness-…" name is a harness file.
package atomicfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harness-agent/harness/internal/safefile"
)

// WriteFile writes data to path atomically, with permissions perm for a new
// file: the data goes to a temporary file beside path, is synced, and is
// renamed over path.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return writeFile(path, data, perm)
}

// Replace writes data to path by renaming a temporary file (".<name>.<pid>"
// beside it) over it, as WriteFile does but without an fsync: for a file
// whose loss to a crash costs nothing worse than rebuilding it (a copy of
// a file synced elsewhere, a cache, a counter).
func Replace(path string, data []byte, perm os.FileMode) error {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.%d", filepath.Base(path), os.Getpid()))
	if err := os.WriteFile(tmp, data, perm); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Patch writes nv over old, as many bytes, at offset at of the file at
// path, when the file is size bytes long and holds old there; it reports
// whether it did. It does not sync: for a copy of a file that was just
// patched and synced the same way (a backup, the record's copy), which the
// caller writes whole when Patch says no. Only a same-length edit inside
// one sector of storage (a count, a timestamp) is safe this way: see
// state.patchInPlace.
func Patch(path string, size, at int64, old, nv []byte) bool {
	if len(old) != len(nv) {
		return false
	}
	f, err := safefile.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() != size {
		return false // not a copy of the file (a backup an interrupted write left behind)
	}
	got := make([]byte, len(old))
	if _, err := f.ReadAt(got, at); err != nil || !bytes.Equal(got, old) {
		return false
	}
	_, err = f.WriteAt(nv, at)
	return err == nil
}

// ReplaceSmall writes data and a final newline to path with Replace (no
// fsync), creating path's directory: for the small runtime files the hooks
// keep beside the state (a session's bookkeeping, its use of the budget,
// the last API error), which a crash may lose at no worse cost than a
// recount.
func ReplaceSmall(path string, data []byte) error {
	os.MkdirAll(filepath.Dir(path), 0o755)
	return Replace(path, append(data, '\n'), 0o644)
}

// ReplaceJSON is ReplaceSmall of v as indented JSON.
func ReplaceJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return ReplaceSmall(path, data)
}
