//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package invoker

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminal reports whether f is a terminal, asked of the terminal driver
// (TIOCGETA): /dev/null is a character device, not a terminal.
func terminal(f *os.File) (ok bool, name string) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, ""
	}
	rc.Control(func(fd uintptr) {
		_, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA)
		ok = err == nil
	})
	return ok, ""
}
