//go:build unix

package quiet

import (
	"syscall"
	"time"
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
		ready, invalid, err := pollIn(fd, left)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || !ready || invalid {
			// poll failed, the wait is over, or fd is not one poll can
			// watch (closed; on macOS a terminal, whose read would then
			// wait unbounded)
			break
		}
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), len(buf)+min(cap(buf), limit-len(buf)))
			copy(grown, buf)
			buf = grown
		}
		got, err := syscall.Read(fd, buf[len(buf):min(cap(buf), limit)])
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue // a signal, or a non-blocking stdin read too early
		}
		if err != nil || got <= 0 {
			break // end of file, or fd cannot be read (closed, a directory)
		}
		buf = buf[:len(buf)+got]
	}
	return buf
}
