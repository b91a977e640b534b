//go:build unix

package budget

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObserveSkipsAFIFO: a transcript_path naming a FIFO (whose plain open
// waits for a writer forever) or a device is not read.
func TestObserveSkipsAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, tr := range []string{fifo, "/dev/zero"} {
		done := make(chan *Session, 1)
		go func() { done <- Observe(dir, "s-"+filepath.Base(tr), 1, tr, time.Now()) }()
		select {
		case s := <-done:
			assert.Zero(t, s.Used())
			assert.Zero(t, s.Offset)
		case <-time.After(10 * time.Second):
			t.Fatalf("Observe(%s) did not return", tr)
		}
	}
}
