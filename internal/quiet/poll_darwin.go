package quiet

import (
	"syscall"
	"time"
)

// pollIn waits up to wait for fd to be readable, by select(2) through the
// syscall package, which has no poll on macOS: golang.org/x/sys/unix would
// initialise fmt, os and reflect before this package could end an inactive
// hook. A descriptor past select's set is said invalid (stdin is 0).
func pollIn(fd int, wait time.Duration) (ready, invalid bool, err error) {
	var set syscall.FdSet
	if fd < 0 || fd >= len(set.Bits)*32 {
		return false, true, nil
	}
	bit := int32(1) << (fd % 32)
	set.Bits[fd/32] |= bit
	tv := syscall.NsecToTimeval(int64(wait))
	if err := syscall.Select(fd+1, &set, nil, nil, &tv); err != nil {
		return false, false, err
	}
	return set.Bits[fd/32]&bit != 0, false, nil
}
