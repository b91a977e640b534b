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
		var infos []os.FileInfo
		for _, name := range []string{state.FileName, state.BackupName} {
			raw, err := os.ReadFile(filepath.Join(p.dir, name))
			require.NoError(t, err)
			_, err = state.Parse(raw, name)
			require.NoError(t, err, "%s unparseable after round %d (%d kills)", name, i+1, kills)
			fi, err := os.Stat(filepath.Join(p.dir, name))
			require.NoError(t, err)
			infos = append(infos, fi)
		}
		// The backup is never a second name of the live file: an in-place
		// write to one would destroy both.
		require.False(t, os.SameFile(infos[0], infos[1]), "%s and %s share an inode after round %d", state.FileName, state.BackupName, i+1)
		if err == nil {
			// A write that completed removed what killed ones left.
			assert.Empty(t, tempFiles(t, p.dir), "temporary files left after the completed write of round %d", i+1)
		}
	}
	t.Logf("%d completed writes and %d processes killed mid-run in %d rounds (final kill window %s)", writes, kills, i, span)
	assert.GreaterOrEqual(t, writes, minWrites)
	assert.NotEmpty(t, p.task("task-001").Checkpoints, "the checkpoints that completed are recorded")

	// A restore loses nothing: after one more completed write the backup
	// holds exactly what was written, and an in-place write that breaks the
	// live file (an editor, a redirect) is repaired from it with every
	// checkpoint.
	out, err := run(0).CombinedOutput()
	require.NoError(t, err, "%s", out)
	written, err := os.ReadFile(filepath.Join(p.dir, state.FileName))
	require.NoError(t, err)
	want := len(p.task("task-001").Checkpoints)
	f, err := os.OpenFile(filepath.Join(p.dir, state.FileName), os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	f.WriteString(`{"tasks": [`)
	f.Close()
	bak, err := os.ReadFile(filepath.Join(p.dir, state.BackupName))
	require.NoError(t, err)
	assert.Equal(t, string(written), string(bak), "the in-place write reached the backup, or the backup is behind")
	out, err = run(1).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "restored from harness-tasks.json.bak")
	assert.Len(t, p.task("task-001").Checkpoints, want, "the restore lost a write")
}

// tempFiles lists the temporary files of the tasks file's atomic writes in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var temps []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "."+state.FileName) {
			temps = append(temps, e.Name())
		}
	}
	return temps
}
