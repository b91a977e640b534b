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
