package quiet

import (
	"io"
	"sync"
	"time"
)

// readWithin reads r until end of file, an error, limit bytes, or wait has
// passed, and returns what it read by then: readStdin where poll(2) is not
// to be had. A goroutine reads; the caller waits for it or for the time.
func readWithin(r io.Reader, limit int, wait time.Duration) []byte {
	var (
		mu   sync.Mutex
		buf  []byte
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		chunk := make([]byte, 32<<10)
		for {
			mu.Lock()
			room := limit - len(buf)
			mu.Unlock()
			if room <= 0 {
				return
			}
			n, err := r.Read(chunk[:min(len(chunk), room)])
			mu.Lock()
			buf = append(buf, chunk[:n]...)
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]byte(nil), buf...)
}
