//go:build linux

package shadow

import (
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/treecache"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The in-process add records what git's does, change after change: from
// the same index and tree, the same entries (path, mode, blob) as `git add
// -A` and the ignored files' step, the same tree as `git write-tree`, stat
// data git itself takes as the files' (no entry it would look at again
// once the files are old), and nothing for fsck to find. Each step goes
// on from our index (trusted as ours) or git's, at random.
func TestAddInProcessIsGits(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { addLikeGit(t, seed) })
	}
}

func addLikeGit(t *testing.T, seed uint64) {
	r, dir := treeRepo(t)
	write(t, dir, ".gitignore", "*.log\nbuild/\n")
	_, err := Save(dir, "first")
	require.NoError(t, err)
	rnd := mrand.New(mrand.NewPCG(seed, 5))
	paths := []string{"a", "a.b", "a-b", "a/b", "a/b.c", "a/c/d", "a/c/e/f", "ab/c", "b", "c/d/e/f/g", "c/d/x", "z/a", "z/zz/a", "é/ü", "x.log", "build/o", "build/p/q", "harness-progress.txt", ".harness-runtime/r", "sub/harness-tasks.json", "sub/.harness-runtime/s", "harness-init.sh/t"}
	index := filepath.Join(r.dir, "index")
	inProcess, fromOurs := 0, false
	for step := range 60 {
		changeAtRandom(rnd, dir, paths, true)
		old := rnd.IntN(2) == 0
		if old {
			// The files older than a checkpoint's racy window, in a
			// second of their own: git compares times to the second, and
			// a file rewritten at the same size, given the same second and
			// its old inode again, would be one it does not see change.
			past := time.Now().Add(-time.Hour + time.Duration(step)*time.Second)
			filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
				if err == nil && p != filepath.Join(dir, ".git") {
					tv := unix.NsecToTimeval(past.UnixNano())
					unix.Lutimes(p, []unix.Timeval{tv, tv})
				}
				return nil
			})
		}
		start, err := os.ReadFile(index)
		require.NoError(t, err)
		done, err := r.addInProcess(walkedFiles(t, r), fromOurs)
		require.NoError(t, err, "step %d", step)
		ours, err := os.ReadFile(index)
		require.NoError(t, err)

		require.NoError(t, os.WriteFile(index, start, 0o600))
		require.NoError(t, r.addWithGit(AddBudget), "step %d", step)
		gits, err := os.ReadFile(index)
		require.NoError(t, err)
		fromOurs = false
		if !done {
			require.Equal(t, start, ours, "step %d: declined, yet the index was written", step)
			continue
		}
		inProcess++
		oursPath, gitsPath := filepath.Join(t.TempDir(), "ours"), filepath.Join(t.TempDir(), "gits")
		require.NoError(t, os.WriteFile(oursPath, ours, 0o600))
		require.NoError(t, os.WriteFile(gitsPath, gits, 0o600))
		lsOurs, err := gitIndex(r, oursPath, "ls-files", "-s")
		require.NoError(t, err)
		lsGits, err := gitIndex(r, gitsPath, "ls-files", "-s")
		require.NoError(t, err)
		require.Equal(t, lsGits, lsOurs, "step %d", step)
		treeOurs, err := gitIndex(r, oursPath, "write-tree")
		require.NoError(t, err)
		treeGits, err := gitIndex(r, gitsPath, "write-tree")
		require.NoError(t, err)
		require.Equal(t, treeGits, treeOurs, "step %d", step)
		if old {
			stale, err := gitIndex(r, oursPath, "diff-files", "--name-only")
			require.NoError(t, err)
			require.Empty(t, stale, "step %d: entries git would look at again", step)
		}
		if rnd.IntN(2) == 0 {
			require.NoError(t, os.WriteFile(index, ours, 0o600))
			fromOurs = true
		}
	}
	require.Greater(t, inProcess, 30, "steps recorded in process")
	out, err := r.git(nil, "fsck", "--strict", "--no-progress", "--no-dangling")
	require.NoError(t, err, out)
}

// What an entry's stat says is trusted only as far as it tells versions
// apart: a file rewritten at the same size with its modification time set
// back is seen by its change time; an entry hashed right after its file
// changed is written smudged (git's word: its size zeroed), so that git
// too hashes it again rather than trust a stat the same tick could repeat.
func TestAddInProcessTrustsNoStaleStat(t *testing.T) {
	r, dir := treeRepo(t)
	_, err := Save(dir, "first")
	require.NoError(t, err)
	file := filepath.Join(dir, "src", "a.go")
	setBack := func(at time.Time) {
		tv := unix.NsecToTimeval(at.UnixNano())
		require.NoError(t, unix.Lutimes(file, []unix.Timeval{tv, tv}))
	}
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	setBack(past)
	done, err := r.addInProcess(walkedFiles(t, r), false)
	require.NoError(t, err)
	require.True(t, done)
	index := filepath.Join(r.dir, "index")
	out, err := gitIndex(r, index, "ls-files", "--debug", "src/a.go")
	require.NoError(t, err)
	assert.Contains(t, out, "size: 10\t", "an old file's entry holds its size")

	write(t, dir, "src/a.go", "package z\n") // the same size
	setBack(past)
	done, err = r.addInProcess(walkedFiles(t, r), false)
	require.NoError(t, err)
	require.True(t, done)
	out, err = gitIndex(r, index, "ls-files", "-s", "src/a.go")
	require.NoError(t, err)
	want, err := gitIndex(r, index, "hash-object", "src/a.go")
	require.NoError(t, err)
	assert.Contains(t, out, want, "the new bytes recorded")

	write(t, dir, "src/a.go", "package y\n")
	setBack(time.Now().Add(time.Minute)) // within any tick of now, however slow the machine
	done, err = r.addInProcess(walkedFiles(t, r), false)
	require.NoError(t, err)
	require.True(t, done)
	out, err = gitIndex(r, index, "ls-files", "--debug", "src/a.go")
	require.NoError(t, err)
	assert.Contains(t, out, "size: 0\t", "a file changed a moment ago: its entry smudged")
	out, err = gitIndex(r, index, "diff-files", "--name-only")
	require.NoError(t, err)
	assert.Contains(t, strings.Fields(out), "src/a.go", "git looks at it again")
}

// A checkpoint reads only the files that moved: an index written here
// last is trusted entry by entry, and one git wrote too once its files are
// older than its racy window.
func TestAddInProcessReadsOnlyWhatMoved(t *testing.T) {
	dir := project(t)
	for i := range 20 {
		write(t, dir, fmt.Sprintf("src/f%02d.go", i), "package src\n")
	}
	past := time.Now().Add(-time.Hour)
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			os.Chtimes(p, past, past)
		}
		return nil
	})
	var opened []string
	defer func(o func(string, int64) ([]byte, error)) { readFile = o }(readFile)
	readFile = func(name string, limit int64) ([]byte, error) {
		opened = append(opened, filepath.Base(name))
		return safefile.ReadFile(name, limit)
	}
	for step, want := range [][]string{nil, {"f03.go"}, {"f03.go", "f04.go"}} {
		switch step {
		case 0:
			_, err := Save(dir, "first") // git's
			require.NoError(t, err)
		default:
			for _, f := range want {
				write(t, dir, "src/"+f, fmt.Sprint("package src // ", step, "\n"))
			}
			opened = nil
			saved, err := Save(dir, fmt.Sprint("step ", step))
			require.NoError(t, err)
			require.True(t, saved)
			assert.ElementsMatch(t, want, opened, "step %d", step)
		}
	}
}

// walkedFiles is the work tree's files as a checkpoint walks them.
func walkedFiles(t *testing.T, r repo) []treecache.File {
	t.Helper()
	tree, _, err := treecache.WalkAll(r.root, r.skip, time.Time{})
	require.NoError(t, err)
	require.False(t, tree.Nested)
	return tree.Files
}

// A file swapped for a FIFO between the walk and its read does not hang
// the checkpoint: the add leaves the tree to git.
func TestAddInProcessDoesNotWaitOnAFIFO(t *testing.T) {
	r, dir := treeRepo(t)
	_, err := Save(dir, "first")
	require.NoError(t, err)
	write(t, dir, "src/a.go", "package a // changed\n")
	files := walkedFiles(t, r)
	require.NoError(t, os.Remove(filepath.Join(dir, "src", "a.go")))
	require.NoError(t, unix.Mkfifo(filepath.Join(dir, "src", "a.go"), 0o644))
	finished := make(chan bool, 1)
	go func() {
		done, _ := r.addInProcess(files, false)
		finished <- done
	}()
	select {
	case done := <-finished:
		assert.False(t, done, "left to git")
	case <-time.After(10 * time.Second):
		t.Fatal("the add waits on a FIFO")
	}
}
