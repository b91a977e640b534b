//go:build unix

package budget

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/record"
)

// TestObserveSkipsAFIFO: a transcript_path naming a FIFO (whose plain open
// waits for a writer forever) or a device is not read.
func TestObserveSkipsAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, tr := range []string{fifo, "/dev/zero"} {
		done := make(chan *Session, 1)
		go func() { done <- Observe(record.Of(dir), "s-"+filepath.Base(tr), 1, tr, time.Now()) }()
		select {
		case s := <-done:
			assert.Zero(t, s.Used())
			assert.Zero(t, s.Offset)
		case <-time.After(10 * time.Second):
			t.Fatalf("Observe(%s) did not return", tr)
		}
	}
}

// TestTotalSkipsAFIFO: a FIFO in place of the sessions' directory or of
// the ended sessions' (whose plain open waits for a writer forever) is
// not read: the total, the end and the daily look return at once.
func TestTotalSkipsAFIFO(t *testing.T) {
	for _, where := range []string{"", endedDir} {
		t.Run("sessions/"+where, func(t *testing.T) {
			rec, sd := endedJob(t, 2)
			End(rec, "s0")
			path := filepath.Join(sd, where)
			require.NoError(t, os.RemoveAll(path))
			require.NoError(t, syscall.Mkfifo(path, 0o644))
			done := make(chan Job, 1)
			go func() {
				End(rec, "s1")
				EndStale(rec, time.Now().Add(30*24*time.Hour), time.Hour)
				os.Remove(filepath.Join(sd, endedSum)) // the sum made again from the files
				done <- Total(rec, nil)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("a FIFO was waited on")
			}
		})
	}
}
