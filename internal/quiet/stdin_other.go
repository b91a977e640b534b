//go:build !unix

package quiet

import (
	"os"
)

// readStdin reads the payload, or what arrived of it within stdinWait.
// Without poll(2), a goroutine reads while the caller waits (readWithin).
func readStdin() []byte { return readWithin(os.Stdin, maxPayload, stdinWait) }
