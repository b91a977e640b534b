//go:build !unix

package hook

import (
	"io"
	"os"
	"time"
)

// readStdin reads the payload, or what arrived of it within stdinWait.
// Without poll(2), a goroutine reads while the caller waits.
func readStdin() []byte {
	done := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(io.LimitReader(os.Stdin, maxPayload))
		done <- data
	}()
	select {
	case data := <-done:
		return data
	case <-time.After(stdinWait):
		return nil
	}
}
