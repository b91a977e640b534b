//go:build unix

package quiet

import (
	"slices"
	"syscall"
	"time"
)

// stdin is the hook's standard input, read on the calling thread, each
// wait bounded by poll(2): no goroutine, no timer and no poller are started
// for it, which a hook's every run would pay for (5–7 % of a do-nothing
// process's start, docs/perf.md).
var stdin = reader{fd: 0, wait: stdinWait}

func readStdin() []byte {
	stdin.upTo(maxPayload)
	return stdin.buf
}

func peekStdin(n int) (doc []byte, whole bool) {
	stdin.upTo(n)
	return stdin.buf, stdin.ended
}

// reader reads a descriptor in steps: up to a first bound, then on.
type reader struct {
	fd       int
	wait     time.Duration // from the first read, for the whole
	buf      []byte
	deadline time.Time
	ended    bool // at its end, an error, maxPayload bytes, or the wait's end
}

// upTo reads until the end (ended) or until n bytes are in buf in all.
func (r *reader) upTo(n int) {
	if r.deadline.IsZero() {
		r.deadline = time.Now().Add(r.wait)
		r.buf = make([]byte, 0, min(16<<10, n))
	}
	n = min(n, maxPayload)
	for !r.ended && len(r.buf) < n {
		left := time.Until(r.deadline)
		if left <= 0 {
			r.ended = true
			break
		}
		ready, invalid, err := pollIn(r.fd, left)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || !ready || invalid {
			// poll failed, the wait is over, or fd is not one poll can
			// watch (closed; on the BSDs a terminal, whose read would
			// then wait unbounded)
			r.ended = true
			break
		}
		if len(r.buf) == cap(r.buf) {
			r.buf = slices.Grow(r.buf, min(cap(r.buf), maxPayload-len(r.buf)))
		}
		got, err := syscall.Read(r.fd, r.buf[len(r.buf):min(cap(r.buf), n)])
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue // a signal, or a non-blocking stdin read too early
		}
		if err != nil || got <= 0 {
			r.ended = true // end of file, or fd cannot be read (closed, a directory)
			break
		}
		r.buf = r.buf[:len(r.buf)+got]
	}
	if len(r.buf) >= maxPayload {
		r.ended = true // what is past it is never read
	}
}
