//go:build unix

package safefile

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// noFollow refuses a symlink as the last element of a path opened to
// write (Touch).
const noFollow = syscall.O_NOFOLLOW

// open opens path without waiting: O_NONBLOCK makes the open of a FIFO
// return at once (a read open with no writer, or a write open that fails
// with no reader), and O_NOCTTY keeps a terminal from becoming the
// process's. Reads and writes of a regular file ignore O_NONBLOCK.
func open(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, perm)
}

// setTimes sets the times of the file at path to at, never through a
// symlink: one put in the mark's place after Touch opened it gets its own
// times changed, not its target's.
func setTimes(path string, at time.Time) error {
	ts := unix.NsecToTimespec(at.UnixNano())
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "chtimes", Path: path, Err: err}
	}
	return nil
}

// readFile is ReadFile in system calls of its own: an *os.File of a file
// opened O_NONBLOCK costs an epoll registration (refused for a regular
// file) and its Stat a second fstat, and a read of a regular file that
// comes back short has met the end (a second read to see EOF is not
// needed).
func readFile(path string, limit int64) ([]byte, error) {
	fd, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	if st.Size > limit {
		return nil, tooLarge(path, limit)
	}
	data := make([]byte, 0, st.Size+1)
	for {
		n, err := retry(func() (int, error) { return syscall.Read(fd, data[len(data):cap(data)]) })
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		asked := cap(data) - len(data)
		data = data[:len(data)+n]
		if int64(len(data)) > limit {
			return nil, tooLarge(path, limit)
		}
		if n < asked {
			return data, nil // short: the end of a regular file
		}
		data = append(data, 0)[:len(data)] // it grew: room for more
	}
}

// openRegular opens path to read, without waiting, and returns its
// descriptor and stat when it is a regular file; anything else is closed
// again and an error wrapping ErrNotRegular.
func openRegular(path string) (fd int, st syscall.Stat_t, err error) {
	fd, err = retry(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return -1, st, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return -1, st, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if uint32(st.Mode)&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return -1, st, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(modeOf(uint32(st.Mode))))}
	}
	return fd, st, nil
}

// readPart is ReadPart in system calls of its own.
func readPart(path string, part func(size int64) (off, n int64)) ([]byte, int64, error) {
	fd, st, err := openRegular(path)
	if err != nil {
		return nil, 0, err
	}
	defer syscall.Close(fd)
	off, n := part(st.Size)
	if off < 0 || n <= 0 {
		return nil, st.Size, nil
	}
	data := make([]byte, n)
	read := 0
	for read < len(data) {
		k, err := retry(func() (int, error) { return syscall.Pread(fd, data[read:], off+int64(read)) })
		if err != nil {
			return nil, st.Size, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if k == 0 {
			break // the file ends first
		}
		read += k
	}
	return data[:read], st.Size, nil
}

// retry runs a system call again while a signal interrupts it (the Go
// runtime's own preemption signals among them).
func retry(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// modeOf is the file type of a stat's mode, as fs.FileMode says it.
func modeOf(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}
