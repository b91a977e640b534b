package shadow

import (
	"bytes"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// project makes a state root with a record directory of its own.
func project(t testing.TB) string {
	t.Helper()
	if _, ok := t.(*testing.T); ok {
		waitCollect = true
		t.Cleanup(func() { waitCollect = false })
	}
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	dir := t.TempDir()
	dir, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	write(t, dir, "harness-tasks.json", `{"tasks":[]}`)
	write(t, dir, "harness-progress.txt", "log\n")
	write(t, dir, ".gitignore", "*.log\nbuild/\n")
	write(t, dir, "src/a.go", "package a\n")
	write(t, dir, "src/b.go", "package b\n")
	return dir
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func read(t testing.TB, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(data)
}

func TestSaveOnlyWhenChanged(t *testing.T) {
	dir := project(t)
	saved, err := Save(dir, "Bash: rm -rf src")
	require.NoError(t, err)
	require.True(t, saved)
	// The next call sees from the index's stamp alone that nothing changed
	// (write-tree rewrote the index after the stamp was first taken).
	r, err := open(dir)
	require.NoError(t, err)
	require.Equal(t, r.indexStamp(), r.readHead().index)
	saved, err = Save(dir, "Bash: again")
	require.NoError(t, err)
	require.False(t, saved, "nothing changed: no checkpoint")
	write(t, dir, "src/a.go", "package a // changed\n")
	saved, err = Save(dir, "Write: src/a.go\nwith a second line")
	require.NoError(t, err)
	require.True(t, saved)
	ps, err := List(dir)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	require.Equal(t, "Write: src/a.go with a second line", ps[0].Message)
	require.Equal(t, 1, ps[0].N)
	require.Equal(t, "Bash: rm -rf src", ps[1].Message)
	// The project's own git is not involved: there is none here.
	_, err = os.Stat(filepath.Join(dir, ".git"))
	require.True(t, os.IsNotExist(err))
}

func TestRestoreBringsBackAndCanBeUndone(t *testing.T) {
	dir := project(t)
	bin := make([]byte, 5000)
	rand.Read(bin)
	write(t, dir, "data.bin", string(bin))
	_, err := Save(dir, "Bash: rm -rf src")
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "src")))
	_, err = Save(dir, "Write: data.bin")
	require.NoError(t, err)
	write(t, dir, "data.bin", "overwritten")
	write(t, dir, "new.txt", "made after")
	write(t, dir, "harness-progress.txt", "log\nmore\n")

	u, err := Restore(dir, 2, "", "harness undo 2")
	require.NoError(t, err)
	require.True(t, u.Before)
	require.Equal(t, "Bash: rm -rf src", u.To.Message)
	require.Equal(t, "package a\n", read(t, dir, "src/a.go"))
	require.Equal(t, string(bin), read(t, dir, "data.bin"))
	require.NoFileExists(t, filepath.Join(dir, "new.txt"))
	require.Equal(t, "log\nmore\n", read(t, dir, "harness-progress.txt"), "the harness's files are never reverted")

	// The state after the deletion is the second newest now.
	_, err = Restore(dir, 2, "", "harness undo 2")
	require.NoError(t, err)
	require.NoDirExists(t, filepath.Join(dir, "src"))
	require.Equal(t, string(bin), read(t, dir, "data.bin"))

	// And the state before the first undo is still there.
	ps, err := List(dir)
	require.NoError(t, err)
	require.Equal(t, "harness undo 2", ps[1].Message)
	_, err = Restore(dir, 2, "", "harness undo 2")
	require.NoError(t, err)
	require.Equal(t, "overwritten", read(t, dir, "data.bin"))
	require.Equal(t, "made after", read(t, dir, "new.txt"))
}

func TestRestoreOnePath(t *testing.T) {
	dir := project(t)
	_, err := Save(dir, "Bash: sed")
	require.NoError(t, err)
	write(t, dir, "src/a.go", "broken")
	write(t, dir, "src/b.go", "also broken")
	write(t, dir, "src/c.go", "new")
	_, err = Restore(dir, 1, "src/a.go", "harness undo 1 src/a.go")
	require.NoError(t, err)
	require.Equal(t, "package a\n", read(t, dir, "src/a.go"))
	require.Equal(t, "also broken", read(t, dir, "src/b.go"))
	_, err = Restore(dir, 2, "src", "harness undo 2 src")
	require.NoError(t, err)
	require.Equal(t, "package b\n", read(t, dir, "src/b.go"))
	require.NoFileExists(t, filepath.Join(dir, "src/c.go"), "a directory is made what it was")
	_, err = Restore(dir, 1, "harness-tasks.json", "x")
	require.ErrorContains(t, err, "harness's own file")
	_, err = Restore(dir, 9, "", "x")
	require.ErrorContains(t, err, "no checkpoint 9")
}

func TestIgnoredFilesUpToTheBound(t *testing.T) {
	dir := project(t)
	write(t, dir, "build/out.o", "small object")
	write(t, dir, "big.log", strings.Repeat("x", MaxIgnored+1))
	write(t, dir, "small.log", "small log")
	write(t, dir, ".git", "gitdir: /elsewhere/.git/worktrees/w1\n") // a worker's worktree
	_, err := Save(dir, "Bash: make clean")
	require.NoError(t, err)
	files := lsTree(t, dir)
	require.Contains(t, files, "build/out.o")
	require.Contains(t, files, "small.log")
	require.NotContains(t, files, "big.log")
	require.NotContains(t, files, "harness-tasks.json")
	require.NotContains(t, files, "\n.git\n")
	require.NotContains(t, files, "harness-progress.txt")

	// A small ignored file that grows past the bound leaves the checkpoints.
	write(t, dir, "small.log", strings.Repeat("y", MaxIgnored+1))
	_, err = Save(dir, "Bash: make")
	require.NoError(t, err)
	require.NotContains(t, lsTree(t, dir), "small.log")

	// Restoring leaves the big files alone.
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "build")))
	_, err = Restore(dir, 2, "", "harness undo 2")
	require.NoError(t, err)
	require.Equal(t, "small object", read(t, dir, "build/out.o"))
	require.Equal(t, MaxIgnored+1, len(read(t, dir, "big.log")))
}

func lsTree(t testing.TB, dir string) string {
	r, err := open(dir)
	require.NoError(t, err)
	out, err := r.git(nil, "ls-tree", "-r", "--name-only", RefPrefix+fmt.Sprintf("%010d", r.readHead().seq))
	require.NoError(t, err)
	return "\n" + out + "\n"
}

func TestKeepsTheLastOnes(t *testing.T) {
	defer func(k int) { Keep = k }(Keep)
	Keep = 3
	dir := project(t)
	for i := range 5 {
		write(t, dir, "n.txt", fmt.Sprint(i))
		saved, err := Save(dir, fmt.Sprintf("step %d", i))
		require.NoError(t, err)
		require.True(t, saved)
	}
	ps, err := List(dir)
	require.NoError(t, err)
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, p.Message)
	}
	require.Equal(t, []string{"step 4", "step 3", "step 2"}, msgs)
}

func TestHeadLostIsRebuilt(t *testing.T) {
	dir := project(t)
	_, err := Save(dir, "one")
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(Dir(dir), headName)))
	write(t, dir, "x", "x")
	saved, err := Save(dir, "two")
	require.NoError(t, err)
	require.True(t, saved)
	ps, err := List(dir)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	require.Equal(t, "two", ps[0].Message)
}

// BenchmarkSaveUnchanged is the cost of a checkpoint before a tool call
// when nothing changed since the last one, with its p50 and p95 (the
// figures in docs/perf.md). 100,000 files only with HARNESS_BENCH_BIG=1:
// making them takes a minute.
func BenchmarkSaveUnchanged(b *testing.B) {
	sizes := []int{100, 10_000}
	if os.Getenv("HARNESS_BENCH_BIG") != "" {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := project(b)
			var buf bytes.Buffer
			for i := range n {
				buf.Reset()
				fmt.Fprintf(&buf, "package p\n\n// file %d\n", i)
				write(b, dir, fmt.Sprintf("d%03d/f%06d.go", i%(n/100+1), i), buf.String())
			}
			write(b, dir, "build/out.o", "an ignored build output")
			defer func(d time.Duration) { AddBudget = d }(AddBudget)
			AddBudget = time.Hour
			start := time.Now()
			_, err := Save(dir, "first")
			require.NoError(b, err)
			first := time.Since(start)
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if saved, err := Save(dir, "again"); err != nil || saved {
					b.Fatal(saved, err)
				}
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
			b.ReportMetric(first.Seconds(), "first-s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkSaveAfterChange is the cost of a checkpoint after a step changed
// one file: what most write-capable calls of a session pay. "settled": the
// change is older than the two seconds a digest is not kept within (the
// window shortened for the benchmark), as when the model took a while to
// make the next call; otherwise it was made right before.
func BenchmarkSaveAfterChange(b *testing.B) {
	for _, c := range []struct {
		n       int
		settled bool
	}{{100, false}, {10_000, false}, {100, true}, {10_000, true}} {
		n := c.n
		name := fmt.Sprint(n)
		if c.settled {
			name += "-settled"
		}
		b.Run(name, func(b *testing.B) {
			if c.settled {
				defer func(q time.Duration) { quiet = q }(quiet)
				quiet = time.Millisecond
			}
			dir := project(b)
			for i := range n {
				write(b, dir, fmt.Sprintf("d%03d/f%06d.go", i%(n/100+1), i), fmt.Sprintf("package p\n\n// file %d\n", i))
			}
			defer func(d time.Duration) { AddBudget = d }(AddBudget)
			AddBudget = time.Hour
			_, err := Save(dir, "first")
			require.NoError(b, err)
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				write(b, dir, "d000/f000000.go", fmt.Sprint("package p // ", i))
				if c.settled {
					time.Sleep(5 * time.Millisecond)
				}
				b.StartTimer()
				start := time.Now()
				if saved, err := Save(dir, "again"); err != nil || !saved {
					b.Fatal(saved, err)
				}
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			waitGC(b, Dir(dir))
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// A slow add goes on in the background instead of being killed half-way;
// the checkpoints wait for it, then go on as usual.
func TestSlowAddGoesOnInTheBackground(t *testing.T) {
	dir := project(t)
	defer func(d time.Duration) { AddBudget = d }(AddBudget)
	AddBudget = 0
	_, err := Save(dir, "first")
	if err == nil {
		t.Skip("the add finished within no time at all")
	}
	require.ErrorContains(t, err, "in the background")
	require.Contains(t, LastError(dir), "in the background")
	AddBudget = 10 * time.Second
	deadline := time.Now().Add(10 * time.Second)
	for {
		saved, err := Save(dir, "second")
		if err == nil {
			require.True(t, saved)
			break
		}
		require.ErrorContains(t, err, "still being recorded")
		require.True(t, time.Now().Before(deadline), "the background add never ended")
		time.Sleep(20 * time.Millisecond)
	}
	require.Empty(t, LastError(dir), "a checkpoint taken clears the last failure")
	ps, err := List(dir)
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.Equal(t, "second", ps[0].Message)
}

// BenchmarkHistoryGrowth is a long job in miniature: a project of 2,000
// files of 4 KB of source-like text, then 300 checkpoints, each after 3 files were rewritten.
// It reports the project's size and the history's, as the hooks leave it
// (with the background collections) and once its dropped checkpoints are
// pruned (the bound: what an hour later looks like). Run with -benchtime 1x.
func BenchmarkHistoryGrowth(b *testing.B) {
	for range b.N {
		dir := project(b)
		// Source-like text: 4 KB of hex words, which compress about 2:1.
		body := func(i, v int) string {
			rng := mrand.New(mrand.NewPCG(uint64(i), uint64(v)))
			var sb strings.Builder
			fmt.Fprintf(&sb, "// file %d version %d\n", i, v)
			for sb.Len() < 4096 {
				fmt.Fprintf(&sb, "%08x %08x %08x %08x\n", rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32())
			}
			return sb.String()
		}
		for i := range 2000 {
			write(b, dir, fmt.Sprintf("d%02d/f%04d.txt", i%20, i), body(i, 0))
		}
		_, err := Save(dir, "first")
		require.NoError(b, err)
		for step := 1; step <= 300; step++ {
			for k := range 3 {
				i := (step*7 + k*611) % 2000
				write(b, dir, fmt.Sprintf("d%02d/f%04d.txt", i%20, i), body(i, step))
			}
			saved, err := Save(dir, fmt.Sprint("step ", step))
			require.NoError(b, err)
			require.True(b, saved)
		}
		ps, err := List(dir)
		require.NoError(b, err)
		require.Len(b, ps, Keep)
		waitGC(b, Dir(dir))
		b.ReportMetric(duMB(b, dir, ".harness"), "project-MB")
		b.ReportMetric(duMB(b, Dir(dir), ""), "history-MB")
		r, _ := open(dir)
		_, err = r.git(nil, "gc", "--quiet", "--prune=now")
		require.NoError(b, err)
		b.ReportMetric(duMB(b, Dir(dir), ""), "pruned-MB")
		b.ReportMetric(0, "ns/op")
	}
}

// waitGC waits for a background collection to end.
func waitGC(b testing.TB, dir string) {
	for range 600 {
		if _, err := os.Stat(filepath.Join(dir, "gc.pid")); os.IsNotExist(err) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// duMB is the size of the files under dir, in MB, leaving out names that
// start with skip ("" skips nothing).
func duMB(b *testing.B, dir, skip string) float64 {
	var n int64
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if skip != "" && strings.HasPrefix(d.Name(), skip) && d.Name() != filepath.Base(dir) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return float64(n) / (1 << 20)
}

// The head file is written over itself in place (the same file, its
// length fixed), and one of another length (an older layout, an edit) is
// replaced whole.
func TestHeadWrittenInPlace(t *testing.T) {
	dir := project(t)
	saved, err := Save(dir, "first")
	require.NoError(t, err)
	require.True(t, saved)
	path := filepath.Join(Dir(dir), headName)
	before, err := os.Stat(path)
	require.NoError(t, err)
	require.EqualValues(t, headSize, before.Size())

	write(t, dir, "src/a.go", "package a // changed\n")
	saved, err = Save(dir, "second")
	require.NoError(t, err)
	require.True(t, saved)
	after, err := os.Stat(path)
	require.NoError(t, err)
	require.True(t, os.SameFile(before, after), "written in place")
	r, err := open(dir)
	require.NoError(t, err)
	h := r.readHead()
	require.Equal(t, 2, h.seq)
	require.True(t, strings.HasSuffix(read(t, Dir(dir), headName), " \n"), "padded")

	// An unpadded head (as an older build wrote it) is read, then replaced.
	line := strings.Fields(read(t, Dir(dir), headName))
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(line, " ")+"\n"), 0o600))
	require.Equal(t, h.tree, r.readHead().tree)
	write(t, dir, "src/b.go", "package b // changed\n")
	saved, err = Save(dir, "third")
	require.NoError(t, err)
	require.True(t, saved)
	require.EqualValues(t, headSize, len(read(t, Dir(dir), headName)))
	require.Equal(t, 3, r.readHead().seq)
}
