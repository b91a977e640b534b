//go:build unix

package hook

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestReadFD(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 200<<10) // past the first buffer, and a pipe's
	tests := []struct {
		name  string
		write []byte
		close bool // the writer closes; else it keeps the pipe open
		limit int
		want  []byte
	}{
		{"a payload, then end of file", []byte(`{"a":1}`), true, maxPayload, []byte(`{"a":1}`)},
		{"nothing, then end of file", nil, true, maxPayload, []byte{}},
		{"more than one buffer", big, true, maxPayload, big},
		{"cut at the limit", big, true, 1000, big[:1000]},
		{"the writer never closes: what came by the wait", []byte(`{"a"`), false, maxPayload, []byte(`{"a"`)},
		{"the writer never closes nor writes", nil, false, maxPayload, []byte{}},
	}
	for _, tt := range tests {
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
			got := readFD(int(r.Fd()), tt.limit, 300*time.Millisecond)
			assert.Equal(t, tt.want, got)
			if tt.close && len(tt.write) <= tt.limit {
				assert.Less(t, time.Since(start), 300*time.Millisecond, "waited for a wait it need not")
			}
			if !tt.close {
				assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "stopped before the wait was over")
			}
		})
	}
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
