//go:build !unix

package safefile

import "os"

// open opens path. Opening a named pipe here does not wait for the other
// end the way a FIFO's open does on Unix; the check of what was opened
// still keeps anything but a regular file from being used.
func open(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}

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
