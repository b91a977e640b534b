//go:build !unix

package safefile

import (
	"io"
	"os"
	"time"
)

// noFollow: no such open flag here (Touch removes a link first).
const noFollow = 0

// open opens path. Opening a named pipe here does not wait for the other
// end the way a FIFO's open does on Unix; the check of what was opened
// still keeps anything but a regular file from being used.
func open(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}

// setTimes sets the times of the file at path to at.
func setTimes(path string, at time.Time) error { return os.Chtimes(path, at, at) }

// readFile is ReadFile through the os package.
func readFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return readAll(f, path, fi.Size(), limit)
}

// readPart is ReadPart through the os package.
func readPart(path string, part func(size int64) (off, n int64)) ([]byte, int64, error) {
	f, err := Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	off, n := part(fi.Size())
	if off < 0 || n <= 0 {
		return nil, fi.Size(), nil
	}
	data := make([]byte, n)
	k, err := f.ReadAt(data, off)
	if err != nil && err != io.EOF {
		return nil, fi.Size(), err
	}
	return data[:k], fi.Size(), nil
}
