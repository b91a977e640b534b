//go:build !unix

package hook

import (
	"os"
)

// readStdin reads the payload, or what arrived of it within stdinWait.
// Without poll(2), a goroutine reads while the caller waits (readWithin).
func readStdin() []byte { return readWithin(os.Stdin, maxPayload, stdinWait) }
