package state

import (
	"bytes"
	"errors"
	"os"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
)

// sector is the unit a storage device writes whole: a write inside one
// sector leaves, even across a power cut, the old bytes or the new ones.
const sector = 512

// oneSpan finds how edited differs from doc when it is by one run of bytes
// of the same length inside one sector (a count or a timestamp changed,
// the usual write of a session's start and end): the run's offset and its
// old and new bytes.
func oneSpan(doc, edited []byte) (at int64, old, nv []byte, ok bool) {
	if len(doc) != len(edited) {
		return 0, nil, nil, false
	}
	i := 0
	for i < len(doc) && doc[i] == edited[i] {
		i++
	}
	if i == len(doc) {
		return 0, nil, nil, false
	}
	j := len(doc)
	for doc[j-1] == edited[j-1] {
		j--
	}
	if i/sector != (j-1)/sector {
		return 0, nil, nil, false
	}
	return int64(i), doc[i:j], edited[i:j], true
}

// patchInPlace writes nv over old, the same number of bytes at offset at,
// in the tasks file of size bytes (synced), its backup and the record's
// copy, without rewriting them. It returns false, having written nothing,
// when the bytes cross a sector boundary (a crash could leave part of
// each) or the file is not the one the edit was made on (not of size
// bytes, not holding old at at): the caller then rewrites the file whole.
//
// Why this is as safe as the rename it replaces: the new file was read
// back as valid (or is a top-level number or timestamp replaced by one of
// the same shape), and the write is one sector's, so every state a reader
// or a crash can leave is the old file or the new one. The file keeps its
// inode and takes a new modification time, which the hooks' cache and the
// record's mark follow.
//
// The backup and the record's copy are patched the same way when they are
// the file's size and hold the old bytes there (they are copies of the
// file, written with it); when not (a write interrupted between the file
// and its backup), they are written whole from the patched file.
func patchInPlace(dir string, size, at int64, old, nv []byte) (patched bool, err error) {
	if len(old) != len(nv) || len(nv) == 0 || at/sector != (at+int64(len(nv))-1)/sector {
		return false, nil
	}
	path := Path(dir)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, nil
	}
	before, err := f.Stat()
	there := make([]byte, len(old))
	if err != nil || !before.Mode().IsRegular() || before.Size() != size {
		f.Close()
		return false, nil
	}
	if _, err := f.ReadAt(there, at); err != nil || !bytes.Equal(there, old) {
		f.Close()
		return false, nil
	}
	if _, err := f.WriteAt(nv, at); err != nil {
		// A write of a few bytes inside one page is whole or nothing; the
		// full rewrite that follows puts the file right either way.
		f.Close()
		return false, nil
	}
	// From here the file holds the new bytes: a failure is the write's,
	// not a reason to make the edit again another way.
	synced := f.Sync()
	if err := f.Close(); synced != nil || err != nil {
		return true, failure.Wrap(failure.EnvSetup, errors.Join(synced, err), "cannot write %s: %v", path, errors.Join(synced, err))
	}
	var whole []byte
	read := func() []byte {
		if whole == nil {
			whole, _ = safefile.ReadFile(path, MaxFileSize)
		}
		return whole
	}
	if !atomicfile.Patch(BackupPath(dir), size, at, old, nv) {
		if doc := read(); doc != nil {
			backup(dir, doc, fileMode(path))
		}
	}
	if rec := record.Of(dir); !rec.PatchTasks(before, at, old, nv, root.Active(dir)) {
		if doc := read(); doc != nil {
			rec.SaveTasks(doc, root.Active(dir))
		}
	}
	return true, nil
}
