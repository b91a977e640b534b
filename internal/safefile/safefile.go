// Package safefile reads files that someone other than the harness may have
// put in place: a path from a hook's payload (the transcript), or a file in
// the project or beside it that the agent can replace (the tasks file, the
// progress log, harness-init.sh, the runtime files, the lock's pid file).
//
// Such a path may name a FIFO, whose open waits for a writer forever, a
// device that never ends (/dev/zero), a directory or a socket. os.ReadFile
// would hang the hook or read without end. Open opens without waiting
// (O_NONBLOCK on Unix), looks at what it opened (fstat, so a file swapped
// in after a stat cannot slip through) and goes on only with a regular
// file; ReadFile also refuses a file larger than the caller's limit.
// Anything else is an error wrapping ErrNotRegular or ErrTooLarge, and
// nothing of it is read. Append is the same for a file appended to (the
// log): a write open of a FIFO waits for a reader.
//
// The hooks run outside Claude Code's sandbox, and write files of their
// own in directories the agent can write too (the runtime directory).
// Touch, AppendOwn, CreateOwn and MkdirOwn write those without waiting
// and never through a link the agent put in their place, which would
// make a hook write where the agent chose.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ErrNotRegular is why a FIFO, a device, a directory or a socket is not read.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is why a file larger than the caller's limit is not read.
var ErrTooLarge = errors.New("file too large")

// Small is the limit for the harness's own small files (a session's
// runtime file, the record's mark, a summary, a lock's pid): any of them
// larger is not one the harness wrote.
const Small = 1 << 20

// Open opens path for reading when it is a regular file. It never waits on
// a FIFO or a device.
func Open(path string) (*os.File, error) {
	return regular(open(path, os.O_RDONLY, 0))
}

// Append opens path for appending, creating it with perm when it is
// missing, when it is a regular file. It never waits on a FIFO with no
// reader, where a plain open for writing would wait for one forever.
func Append(path string, perm os.FileMode) (*os.File, error) {
	return regular(open(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm))
}

// OpenFile opens path with flag (os.O_RDWR, os.O_WRONLY|os.O_CREATE, …)
// when it is a regular file, never waiting on a FIFO. For a file written
// in place (a lock file, a stamp, a runtime file patched over itself), it
// also spares the system calls os.OpenFile spends on a regular file opened
// without O_NONBLOCK: the switch to non-blocking and back around a poller
// registration the kernel refuses (a file's reads and writes ignore the
// flag).
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return regular(open(path, flag, perm))
}

// Touch sets the times of the regular file at path to at, creating it
// empty when missing: a mark of the harness's own whose age is all it
// says (a heartbeat, the last prune). It never waits and never writes
// through a link: whatever else stands in the file's place (a FIFO, whose
// write open waits for a reader; a symlink, through which a write would
// truncate or touch another file) is removed first; a directory is left,
// and an error.
func Touch(path string, at time.Time) error {
	f, err := openOwn(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	return setTimes(path, at)
}

// AppendOwn is Append for a file only the harness writes, in a directory
// the agent can write too (the doom-loop ring in the runtime directory):
// a FIFO or a symlink in its place is removed and the file made again, so
// an append never waits and never reaches another file through a link.
func AppendOwn(path string, perm os.FileMode) (*os.File, error) {
	return openOwn(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
}

// MkdirOwn makes the directory rel below root (root itself is taken as
// it is) a directory of its own at each step: what else stands in the
// place of one (a symlink, through which the harness's writes would land
// in a directory of the agent's choosing; a file; a FIFO) is removed and
// a directory made. It returns the directory's path.
func MkdirOwn(root, rel string) (string, error) {
	dir := root
	for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/") {
		dir = filepath.Join(dir, part)
		isDir, err := RemoveUnlessDir(dir)
		if err != nil {
			return "", err
		}
		if isDir {
			continue
		}
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			return "", &fs.PathError{Op: "mkdir", Path: dir, Err: ErrNotRegular}
		}
	}
	return dir, nil
}

// RemoveUnlessDir removes what stands at path unless it is a directory (a
// symlink, even to one; a file; a FIFO), and reports whether a directory
// is there.
func RemoveUnlessDir(path string) (isDir bool, err error) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return false, nil
	case fi.IsDir():
		return true, nil
	}
	return false, os.Remove(path)
}

// CreateOwn creates a new file at path, never an existing one nor
// through a link, and writes data to it.
func CreateOwn(path string, data []byte, perm os.FileMode) error {
	f, err := open(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// openOwn opens the harness's own file at path with flag, removing what
// else stands in its place first (not a directory: an error), and never
// following a symlink where the system can refuse one (noFollow).
func openOwn(path string, flag int, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(fi.Mode()))}
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	return regular(open(path, flag|noFollow, perm))
}

// ReadPart reads part of the regular file at path: part is given the
// file's size (from the fstat that checks what was opened) and says where
// to begin and how many bytes to read. data is shorter than asked when the
// file ends first. On Unix it takes four system calls (open, fstat,
// pread, close; an *os.File's open adds a poller registration, and a
// Stat or a Seek one more): a hook that compares a log's tail or reads a
// session's new lines does so at every turn end.
func ReadPart(path string, part func(size int64) (off, n int64)) (data []byte, size int64, err error) {
	return readPart(path, part)
}

// regular returns f when it is a regular file, and closes it otherwise.
func regular(f *os.File, err error) (*os.File, error) {
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: f.Name(), Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(fi.Mode()))}
	}
	return f, nil
}

// ReadDir lists the directory at path (os.ReadDir), when it is one: a
// FIFO in its place is refused at once, where os.ReadDir's open would
// wait for a writer forever.
func ReadDir(path string) ([]os.DirEntry, error) {
	f, err := openDir(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// Names lists the names in the directory at path, unsorted (ReadDir
// without the entries' types), when it is one.
func Names(path string) ([]string, error) {
	f, err := openDir(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// openDir opens the directory at path without waiting on what may be in
// its place.
func openDir(path string) (*os.File, error) {
	f, err := open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.IsDir() {
		err = &fs.PathError{Op: "readdir", Path: path, Err: fmt.Errorf("not a directory (%s)", kind(fi.Mode()))}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads the regular file at path whole, when it holds at most
// limit bytes. Every hook reads a few such files, so on Unix it does so in
// four system calls (open, fstat, read, close; readFile).
func ReadFile(path string, limit int64) ([]byte, error) { return readFile(path, limit) }

// readAll reads f, whose size was size when it was opened, whole: one
// byte past the limit is asked for, to tell a file that grew past it.
func readAll(f *os.File, path string, size, limit int64) ([]byte, error) {
	if size > limit {
		return nil, tooLarge(path, limit)
	}
	data := make([]byte, 0, size+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if int64(len(data)) > limit {
			return nil, tooLarge(path, limit)
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

func tooLarge(path string, limit int64) error {
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (over %d bytes)", ErrTooLarge, limit)}
}

// kind names a file mode that is not a regular file's, for the error.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "type " + m.Type().String()
}
