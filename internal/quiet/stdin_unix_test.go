//go:build unix

package quiet

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// readFD reads fd as stdin is read: up to limit bytes, for wait at most.
func readFD(fd, limit int, wait time.Duration) []byte {
	r := reader{fd: fd, wait: wait}
	r.upTo(limit)
	return r.buf
}

func TestReadFD(t *testing.T) {
	testBoundedRead(t, func(r *os.File, limit int, wait time.Duration) []byte { return readFD(int(r.Fd()), limit, wait) })
}

func TestReadFDNotReadable(t *testing.T) {
	dir, err := os.Open(t.TempDir())
	require.NoError(t, err)
	defer dir.Close()
	assert.Empty(t, readFD(int(dir.Fd()), maxPayload, time.Second), "a directory")

	r, w, err := os.Pipe()
	require.NoError(t, err)
	w.Close()
	fd := int(r.Fd())
	r.Close()
	assert.Empty(t, readFD(fd, maxPayload, time.Second), "a closed descriptor")
}

func TestReadFDNonBlocking(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, unix.SetNonblock(int(r.Fd()), true))
	go func() {
		time.Sleep(50 * time.Millisecond)
		w.Write([]byte(`{"late":true}`))
		w.Close()
	}()
	assert.Equal(t, []byte(`{"late":true}`), readFD(int(r.Fd()), maxPayload, 5*time.Second))
}

// Off reads a first part of the payload, the hook the rest: one read, one
// wait for the whole.
func TestReaderInSteps(t *testing.T) {
	big := make([]byte, peekLimit+50<<10)
	for i := range big {
		big[i] = byte('a' + i%26)
	}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	go func() {
		w.Write(big)
		w.Close()
	}()
	rd := reader{fd: int(r.Fd()), wait: 5 * time.Second}
	rd.upTo(peekLimit)
	assert.Equal(t, peekLimit, len(rd.buf))
	assert.False(t, rd.ended, "ended before its end")
	rd.upTo(maxPayload)
	assert.True(t, rd.ended)
	assert.Equal(t, big, rd.buf)

	// The wait is the whole read's, from its first step.
	r2, w2, err := os.Pipe()
	require.NoError(t, err)
	defer r2.Close()
	defer w2.Close()
	w2.Write([]byte(`{"a":1`))
	const wait = 300 * time.Millisecond
	start := time.Now()
	rd = reader{fd: int(r2.Fd()), wait: wait}
	rd.upTo(3)
	assert.Equal(t, `{"a`, string(rd.buf))
	assert.False(t, rd.ended)
	time.Sleep(wait / 2)
	rd.upTo(maxPayload)
	assert.True(t, rd.ended)
	assert.Equal(t, `{"a":1`, string(rd.buf))
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, wait)
	assert.Less(t, took, wait*3/2+100*time.Millisecond, "waited anew for the second step")
}
