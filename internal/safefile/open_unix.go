//go:build unix

package safefile

import (
	"os"
	"syscall"
)

// open opens path without waiting: O_NONBLOCK makes the open of a FIFO
// return at once (a read open with no writer, or a write open that fails
// with no reader), and O_NOCTTY keeps a terminal from becoming the
// process's. Reads and writes of a regular file ignore O_NONBLOCK.
func open(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, perm)
}
