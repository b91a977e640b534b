package invoker

import (
	"os"
	"syscall"
)

// terminal reports whether f is a console.
func terminal(f *os.File) (ok bool, name string) {
	var mode uint32
	return syscall.GetConsoleMode(syscall.Handle(f.Fd()), &mode) == nil, ""
}
