package quiet

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readCase is a writer at one end of a pipe, and what a bounded read of
// the other end returns (readFD, readWithin).
type readCase struct {
	name  string
	write []byte
	close bool // the writer closes; else it keeps the pipe open
	limit int
	want  string
}

func readCases() []readCase {
	big := bytes.Repeat([]byte("x"), 200<<10) // past the first buffer, and a pipe's
	return []readCase{
		{"a payload, then end of file", []byte(`{"a":1}`), true, maxPayload, `{"a":1}`},
		{"nothing, then end of file", nil, true, maxPayload, ""},
		{"more than one buffer", big, true, maxPayload, string(big)},
		{"cut at the limit", big, true, 1000, string(big[:1000])},
		{"the writer never closes: what came by the wait", []byte(`{"a"`), false, maxPayload, `{"a"`},
		{"the writer never closes nor writes", nil, false, maxPayload, ""},
	}
}

// testBoundedRead runs each case through read, given the pipe's read end
// and the wait.
func testBoundedRead(t *testing.T, read func(r *os.File, limit int, wait time.Duration) []byte) {
	const wait = 300 * time.Millisecond
	for _, tt := range readCases() {
		t.Run(tt.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer r.Close()
			defer w.Close()
			go func() {
				w.Write(tt.write)
				if tt.close {
					w.Close()
				}
			}()
			start := time.Now()
			assert.Equal(t, tt.want, string(read(r, tt.limit, wait)))
			if tt.close {
				assert.Less(t, time.Since(start), wait, "waited for a wait it need not")
			} else {
				assert.GreaterOrEqual(t, time.Since(start), wait, "stopped before the wait was over")
			}
		})
	}
}

// readWithin is readStdin off unix: the same answers as readFD's.
func TestReadWithin(t *testing.T) {
	testBoundedRead(t, func(r *os.File, limit int, wait time.Duration) []byte { return readWithin(r, limit, wait) })
}
