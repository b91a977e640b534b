//go:build !windows

package workers

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A FIFO where the supervisor's status file goes (the runtime directory is
// within the agent's reach) is no status, at once: `harness status` must
// not wait on it.
func TestReadStatusDoesNotOpenAFIFO(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Dir(StatusPath(dir)), 0o755))
	require.NoError(t, syscall.Mkfifo(StatusPath(dir), 0o644))
	_, _, ok := ReadStatus(dir)
	assert.False(t, ok)
}

func TestStatusRoundTrips(t *testing.T) {
	dir := t.TempDir()
	sv := &Supervisor{o: Options{Root: dir, Now: func() time.Time { return time.Unix(0, 0) }}, branch: "main",
		slots: []*slot{{id: "w1", tree: "/t/w1", sessions: 2, stopped: true}}}
	sv.writeStatus("job done")
	st, live, ok := ReadStatus(dir)
	require.True(t, ok)
	assert.False(t, live)
	assert.Equal(t, "main", st.Branch)
	assert.Equal(t, "job done", st.Ended)
	assert.Equal(t, []WorkerStatus{{ID: "w1", Tree: "/t/w1", State: "stopped", Sessions: 2, Log: LogPath(dir, "w1")}}, st.Workers)
}
