//go:build unix

package safefile

import (
	"os"
	"syscall"
)

// open opens path without waiting: O_NONBLOCK makes the open of a FIFO
// with no writer return at once, and O_NOCTTY keeps a terminal from
// becoming the process's. Reads of a regular file ignore O_NONBLOCK.
func open(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}
