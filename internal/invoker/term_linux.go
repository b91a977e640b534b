package invoker

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// terminal reports whether f is a terminal, asked of the terminal driver
// (TCGETS): /dev/null is a character device, not a terminal. name is the
// device, read from /proc/self/fd.
func terminal(f *os.File) (ok bool, name string) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, ""
	}
	var fd uintptr
	rc.Control(func(d uintptr) {
		var t syscall.Termios
		_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, d, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
		ok, fd = errno == 0, d
	})
	if ok {
		name, _ = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
	}
	return ok, name
}
