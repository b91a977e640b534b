//go:build !unix

package quiet

import (
	"os"
)

var (
	stdin     []byte
	stdinRead bool
)

// readStdin reads the payload, or what arrived of it within stdinWait.
// Without poll(2), a goroutine reads while the caller waits (readWithin).
func readStdin() []byte {
	if !stdinRead {
		stdin, stdinRead = readWithin(os.Stdin, maxPayload, stdinWait), true
	}
	return stdin
}

// peekStdin reads nothing: off decides nothing here.
func peekStdin(int) ([]byte, bool) { return nil, false }
