package cycle

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/state"
)

// writerEnv makes the test binary a state writer instead of a test run.
const writerEnv = "HARNESS_TEST_STATE_WRITER"

func TestMain(m *testing.M) {
	if root := os.Getenv(writerEnv); root != "" {
		writeForever(root)
	}
	cleanup := isolate()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// writeForever records checkpoints and renewals on task-001 until killed:
// every iteration is a full state write (backup, temporary file, rename).
func writeForever(root string) {
	w := New(root, root)
	for i := 1; ; i++ {
		if _, err := w.Checkpoint("task-001", 1, 1, fmt.Sprintf("write %d", i)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		if _, err := w.Renew("task-001"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
}

// A writer killed with SIGKILL at any point never leaves a tasks file (or
// backup) that does not parse: writes are atomic renames.
func TestSIGKILLDuringWritesNeverCorrupts(t *testing.T) {
	t.Parallel()
	p := newProject(t, state.Concurrent, task("task-001", "true"))
	_, err := p.worker("writer").Claim("")
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	// Kill at least minKills times and until hundreds of writes happened:
	// a loaded machine writes less per kill, so it takes more kills, never
	// a weaker test. maxKills only bounds a writer that makes no progress.
	const minKills, minWrites, maxKills = 20, 200, 400
	kills, writes := 0, 0
	for ; kills < minKills || writes <= minWrites; kills++ {
		require.Less(t, kills, maxKills, "the writer made only %d writes in %d kills", writes, kills)
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), writerEnv+"="+p.dir, "HARNESS_WORKER_ID=writer")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(50+rand.IntN(200)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		err := cmd.Wait()
		require.Error(t, err)
		require.Empty(t, stderr.String(), "the writer failed on its own")

		for _, name := range []string{state.FileName, state.BackupName} {
			raw, err := os.ReadFile(p.dir + "/" + name)
			require.NoError(t, err)
			_, err = state.Parse(raw, name)
			require.NoError(t, err, "%s unparseable after kill %d", name, kills+1)
		}
		writes = 2 * len(p.task("task-001").Checkpoints) // each with a renewal
	}
	t.Logf("about %d state writes across %d kills", writes, kills)
	assert.Greater(t, writes, minWrites, "hundreds of writes, killed mid-stream many times over")
}
