//go:build unix && !linux && !darwin

package quiet

import (
	"time"

	"golang.org/x/sys/unix"
)

// pollIn waits up to wait for fd to be readable.
func pollIn(fd int, wait time.Duration) (ready, invalid bool, err error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int((wait+time.Millisecond-1)/time.Millisecond))
	if err != nil {
		return false, false, err
	}
	return n > 0, fds[0].Revents&unix.POLLNVAL != 0, nil
}
