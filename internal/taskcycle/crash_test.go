package taskcycle

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/testbin"

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
	return filepath.Join(testbin.Build(t), "harness")
}

// Real `harness checkpoint` and `harness renew` processes, each killed with
// SIGKILL at a random point of its run, never leave a tasks file (or backup)
// that does not parse: writes are atomic renames.
func TestSIGKILLDuringWritesNeverCorrupts(t *testing.T) {
	if testing.Short() {
		t.Skip("hundreds of processes killed, up to 15 s; skipped with -short")
	}
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
	// Kills land anywhere from the start of the process to the end of its
	// write (testbin.Killer).
	killer := testbin.NewKiller(t, run)

	// Kill until at least minKills processes died mid-run and hundreds of
	// writes happened: a loaded machine needs more rounds, never a weaker
	// test. maxRounds only bounds a writer that makes no progress.
	// The loop stops after budget even then, once it has the floor of
	// floorKills kills and floorWrites writes, so the suite stays bounded.
	const minKills, minWrites, maxRounds = 100, 200, 5000
	const floorKills, floorWrites, budget = 20, 20, 15 * time.Second
	kills, writes, i := 0, 0, 0
	deadline := time.Now().Add(budget)
	for ; kills < minKills || writes < minWrites; i++ {
		if time.Now().After(deadline) && kills >= floorKills && writes >= floorWrites {
			break
		}
		require.Less(t, i, maxRounds, "%d writes and %d kills in %d rounds", writes, kills, i)
		cmd := run(i)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		killed, err := killer.Run(cmd)
		require.NoError(t, err, "harness %s failed on its own: %s", strings.Join(cmd.Args[1:], " "), stderr.String())
		if killed {
			kills++
		} else {
			writes++
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
		if !killed {
			// A write that completed removed what killed ones left.
			assert.Empty(t, tempFiles(t, p.dir), "temporary files left after the completed write of round %d", i+1)
		}
	}
	t.Logf("%d completed writes and %d processes killed mid-run in %d rounds (final kill window %s)", writes, kills, i, killer.Span)
	assert.GreaterOrEqual(t, writes, floorWrites)
	assert.GreaterOrEqual(t, kills, floorKills)
	assert.NotEmpty(t, p.task("task-001").Checkpoints, "the checkpoints that completed are recorded")

	// A restore loses nothing: after one more completed write the backup
	// and the record hold exactly what was written, and an in-place write
	// that breaks the live file (an editor, a redirect) is repaired with
	// every checkpoint (from the record, by the check before the verb; the
	// backup is what is left without one: state_corrupt.txtar).
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
	assert.Contains(t, string(out), "HARNESS TAMPER")
	assert.Contains(t, string(out), "- harness-tasks.json was changed")
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

// A dependency cycle through every one of 10,000 tasks: the real `harness
// next` marks each task once with a bounded message (the cycle's path in
// every task made the file and the log grow by the square of the size),
// and a second run changes nothing.
func TestHugeCycleIsMarkedOnceWithBoundedMessages(t *testing.T) {
	t.Parallel()
	bin := buildHarness(t)
	const n = 10000
	p := newProject(t, state.Exclusive)
	p.write(state.FileName, cycleState(n))
	p.adopt()
	size := func(name string) int {
		fi, err := os.Stat(filepath.Join(p.dir, name))
		if os.IsNotExist(err) {
			return 0
		}
		require.NoError(t, err)
		return int(fi.Size())
	}
	tasksBefore, logBefore := size(state.FileName), size("harness-progress.txt")
	next := func() string {
		cmd := exec.Command(bin, "next")
		cmd.Dir = p.dir
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	next()
	perTask := func(before, after int) int { return (after - before) / n }
	assert.LessOrEqual(t, perTask(tasksBefore, size(state.FileName)), 300, "tasks file growth per task")
	assert.LessOrEqual(t, perTask(logBefore, size("harness-progress.txt")), 300, "log growth per task")
	got := p.task("task-00001")
	require.Len(t, got.ErrorLog, 1)
	assert.Contains(t, got.ErrorLog[0], "[DEPENDENCY] Circular dependency detected: task-00001 is one of 10000 tasks that depend on each other in cycles, e.g. task-00001 -> task-00002 -> ")
	assert.Contains(t, got.ErrorLog[0], "(9994 more) -> task-00001")

	tasksAfter, logAfter := size(state.FileName), size("harness-progress.txt")
	next()
	assert.Equal(t, tasksAfter, size(state.FileName), "a second run marks nothing again")
	assert.Equal(t, logAfter, size("harness-progress.txt"))
}

// cycleState is a tasks file of n tasks each depending on the next, the
// last on the first: one dependency cycle through all of them.
func cycleState(n int) string {
	var doc strings.Builder
	doc.WriteString(`{"version": 2, "session_config": {"concurrency_mode": "exclusive"}, "tasks": [`)
	for i := range n {
		if i > 0 {
			doc.WriteString(",\n")
		}
		fmt.Fprintf(&doc, `{"id": "task-%05d", "title": "T", "status": "pending", "priority": "P1", "depends_on": ["task-%05d"], "attempts": 0, "max_attempts": 3, "started_at_commit": null, "validation": {"command": "true", "timeout_seconds": 60}, "on_failure": {"cleanup": null}, "error_log": [], "checkpoints": [], "completed_at": null}`, i+1, (i+1)%n+1)
	}
	doc.WriteString("], \"session_count\": 0, \"last_session\": null}\n")
	return doc.String()
}

// What `harness next` does on a 10,000-task dependency cycle: validate the
// dependencies, mark every task once, write the file (docs/perf.md; the
// target is well under 1 s).
func BenchmarkDependencyCycle10000(b *testing.B) {
	dir := b.TempDir()
	doc := cycleState(10000)
	for b.Loop() {
		b.StopTimer()
		require.NoError(b, os.WriteFile(filepath.Join(dir, state.FileName), []byte(doc), 0o644))
		b.StartTimer()
		_, err := state.Update(dir, func(s *state.State) error {
			ValidateDependencies(s, time.Now())
			return nil
		})
		require.NoError(b, err)
	}
}
