package quiet

import (
	"syscall"
	"time"
	"unsafe"
)

// pollIn waits up to wait for fd to be readable, by ppoll(2) through the
// syscall package: golang.org/x/sys/unix would initialise strings and
// unicode before this package could end an inactive hook.
func pollIn(fd int, wait time.Duration) (ready, invalid bool, err error) {
	type pollFd struct {
		fd             int32
		events, revent int16
	}
	const pollIn, pollNval = 0x1, 0x20
	p := pollFd{fd: int32(fd), events: pollIn}
	ts := syscall.NsecToTimespec(int64(wait))
	n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&p)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if errno != 0 {
		return false, false, errno
	}
	return n > 0, p.revent&pollNval != 0, nil
}
