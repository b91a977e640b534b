package invoker

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The walk over this machine's /proc: a live shell started with the
// session in its environment is seen as the session, and its short name
// read from stat.
func TestWalkRealProc(t *testing.T) {
	sh := exec.Command("sh", "-c", "sleep 30; exit 0")
	sh.Env = append(os.Environ(), "CLAUDE_CODE_SESSION_ID=real-proc")
	require.NoError(t, sh.Start())
	defer func() { sh.Process.Kill(); sh.Wait() }()
	// On a loaded machine the new process's environment may show in /proc
	// a moment after Start returns: look again for up to a second.
	var got Invoker
	for range 50 {
		if got = Walk(ProcFS{FS: os.DirFS("/proc")}, sh.Process.Pid, Options{Stop: os.Getpid()}); got.Session != "" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, sh.Process.Pid, got.Parent.PID)
	assert.Equal(t, "sh", got.Parent.Comm)
	assert.Equal(t, os.Getpid(), got.Parent.PPID)
	assert.Contains(t, got.Session, "has CLAUDE_CODE_SESSION_ID")
}
