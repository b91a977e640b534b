//go:build unix

package hook

import (
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// readStdin reads the payload on the calling thread, each wait bounded by
// poll(2): no goroutine, no timer and no poller are started for it, which a
// hook's every run would pay for (5–7 % of a do-nothing process's start,
// docs/perf.md).
func readStdin() []byte { return readFD(0, maxPayload, stdinWait) }

// readFD reads fd until end of file, an error, limit bytes, or wait has
// passed, and returns what it read by then.
func readFD(fd, limit int, wait time.Duration) []byte {
	deadline := time.Now().Add(wait)
	buf := make([]byte, 0, min(16<<10, limit))
	for len(buf) < limit {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		ready := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(ready, int((left+time.Millisecond-1)/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 || ready[0].Revents&unix.POLLNVAL != 0 {
			// poll failed, the wait is over, or fd is not one poll can
			// watch (closed; on macOS a terminal, whose read would then
			// wait unbounded)
			break
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), limit-len(buf)))
		}
		got, err := unix.Read(fd, buf[len(buf):min(cap(buf), limit)])
		if err == unix.EINTR || err == unix.EAGAIN {
			continue // a signal, or a non-blocking stdin read too early
		}
		if err != nil || got <= 0 {
			break // end of file, or fd cannot be read (closed, a directory)
		}
		buf = buf[:len(buf)+got]
	}
	return buf
}
