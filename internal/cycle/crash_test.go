package cycle

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/state"
)

func TestMain(m *testing.M) {
	cleanup := isolate()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// buildHarness builds the real harness command for tests that run it as a
// process.
func buildHarness(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "harness")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/harness-agent/harness/hooks/harness").CombinedOutput()
	require.NoError(t, err, "building harness: %s", out)
	return bin
}

// Real `harness checkpoint` and `harness renew` processes, each killed with
// SIGKILL at a random point of its run, never leave a tasks file (or backup)
// that does not parse: writes are atomic renames.
func TestSIGKILLDuringWritesNeverCorrupts(t *testing.T) {
	t.Parallel()
	bin := buildHarness(t)
	p := newProject(t, state.Concurrent, task("task-001", "true"))
	_, err := p.worker("writer").Claim("")
	require.NoError(t, err)
	run := func(i int) *exec.Cmd {
		args := []string{"renew", "task-001"}
		if i%2 == 0 {
			args = []string{"checkpoint", "task-001", "1/1", fmt.Sprintf("write %d", i)}
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = p.dir
		cmd.Env = append(os.Environ(), "HARNESS_WORKER_ID=writer")
		return cmd
	}
	// How long one run takes here: kills land anywhere from the start of
	// the process to the end of its write.
	var took []time.Duration
	for i := range 5 {
		start := time.Now()
		out, err := run(i).CombinedOutput()
		require.NoError(t, err, "%s", out)
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	span := took[len(took)/2]

	// Kill until at least minKills processes died mid-run and hundreds of
	// writes happened: a loaded machine needs more rounds, never a weaker
	// test. maxRounds only bounds a writer that makes no progress.
	const minKills, minWrites, maxRounds = 100, 200, 5000
	kills, writes, i := 0, 0, 0
	for ; kills < minKills || writes < minWrites; i++ {
		require.Less(t, i, maxRounds, "%d writes and %d kills in %d rounds", writes, kills, i)
		cmd := run(i)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(rand.Int64N(int64(span) + 1)))
		cmd.Process.Signal(syscall.SIGKILL) // fails harmlessly when it has exited
		err := cmd.Wait()
		var exit *exec.ExitError
		// The window follows the machine's pace: about half the processes
		// are killed, at points spread over their whole run.
		switch {
		case err == nil:
			writes++
			span -= span / 8
		case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
			kills++
			span += span/8 + time.Millisecond
		default:
			t.Fatalf("harness %s failed on its own: %v: %s", strings.Join(cmd.Args[1:], " "), err, stderr.String())
		}
		for _, name := range []string{state.FileName, state.BackupName} {
			raw, err := os.ReadFile(filepath.Join(p.dir, name))
			require.NoError(t, err)
			_, err = state.Parse(raw, name)
			require.NoError(t, err, "%s unparseable after round %d (%d kills)", name, i+1, kills)
		}
	}
	t.Logf("%d completed writes and %d processes killed mid-run in %d rounds (final kill window %s)", writes, kills, i, span)
	assert.GreaterOrEqual(t, writes, minWrites)
	assert.NotEmpty(t, p.task("task-001").Checkpoints, "the checkpoints that completed are recorded")
}
