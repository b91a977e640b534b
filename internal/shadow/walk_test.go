package shadow

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/treecache"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quietProject is project with a first checkpoint taken (quietSave).
func quietProject(t *testing.T) string {
	t.Helper()
	dir := project(t)
	quietSave(t, dir)
	return dir
}

// quietSave takes the first checkpoint of dir with quiet set to nothing
// for the test (its files were written a moment ago), so that the
// checkpoint keeps its digest.
func quietSave(t *testing.T, dir string) {
	t.Helper()
	quiet = 0
	t.Cleanup(func() { quiet = 2 * time.Second })
	time.Sleep(20 * time.Millisecond) // past the clock's tick
	saved, err := Save(dir, "first")
	require.NoError(t, err)
	require.True(t, saved)
}

// run runs script with sh in dir, as a test identity.
func run(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

// noGit takes git off PATH: a Save that needs it fails.
func noGit(t *testing.T) {
	t.Helper()
	t.Setenv("PATH", t.TempDir())
}

// A Save runs no git at all when nothing changed since the last
// checkpoint (the digest), nor for the usual change (files edited, made,
// removed, a mode): those are recorded in process. Only what the ignore
// rules decide, a large file, needs git.
func TestSaveWithoutGit(t *testing.T) {
	cases := []struct {
		name    string
		change  func(dir string)
		saved   bool // a checkpoint is made without git
		needGit bool
	}{
		{name: "nothing", change: func(string) {}},
		{name: "the harness's files", change: func(dir string) {
			write(t, dir, "harness-progress.txt", "log\nmore\n")
			write(t, dir, ".harness-runtime/x", "x")
		}},
		{name: "a file's bytes", change: func(dir string) { write(t, dir, "src/a.go", "package a // changed\n") }, saved: true},
		{name: "a new file", change: func(dir string) { write(t, dir, "src/c.go", "package c\n") }, saved: true},
		{name: "an ignored file", change: func(dir string) { write(t, dir, "debug.log", "x\n") }, saved: true},
		{name: "a removed file", change: func(dir string) { require.NoError(t, os.Remove(dir+"/src/b.go")) }, saved: true},
		{name: "a mode", change: func(dir string) { require.NoError(t, os.Chmod(dir+"/src/a.go", 0o755)) }, saved: true},
		{name: "a symbolic link", change: func(dir string) { require.NoError(t, os.Symlink("a.go", dir+"/src/link")) }, saved: true},
		{name: "a large ignored file", change: func(dir string) { write(t, dir, "big.log", strings.Repeat("x", MaxIgnored+1)) }, needGit: true},
		{name: "a large file", change: func(dir string) { write(t, dir, "src/big.go", strings.Repeat("x", MaxIgnored+1)) }, needGit: true, saved: true},
		{name: "a nested repository", change: func(dir string) { run(t, dir, "git init -q sub && cd sub && git commit -q --allow-empty -m x") }, needGit: true, saved: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := quietProject(t)
			c.change(dir)
			path := os.Getenv("PATH")
			noGit(t)
			saved, err := Save(dir, "Bash: go test")
			// Elsewhere than on Linux every change goes to git (statData).
			if c.needGit || c.saved && runtime.GOOS != "linux" {
				require.Error(t, err, "recorded without git")
				t.Setenv("PATH", path)
				saved, err = Save(dir, "Bash: go test")
			}
			require.NoError(t, err)
			assert.Equal(t, c.saved, saved)
			if !c.saved {
				return
			}
			t.Setenv("PATH", path)
			r, err := open(dir)
			require.NoError(t, err)
			out, err := r.git(nil, "diff-index", "--cached", "--name-only", "-z", ref(r.readHead().seq))
			require.NoError(t, err)
			assert.Empty(t, out, "the checkpoint is the index")
			out, err = r.git(nil, "update-index", "-q", "--refresh")
			require.NoError(t, err, out)
			out, err = r.git(nil, "diff-files", "--name-only")
			require.NoError(t, err)
			assert.Empty(t, out, "the index holds the tree's files as they are")
			out, err = r.git(nil, "ls-files", "-o", "--exclude-standard")
			require.NoError(t, err)
			assert.Empty(t, out, "the index holds every file of the tree")
		})
	}
}

// A checkpoint of a tree that changed within quiet of it keeps no digest:
// the next Save looks at the tree again (in process, and, nothing changed,
// makes no checkpoint).
func TestRecentChangeKeepsNoDigest(t *testing.T) {
	dir := quietProject(t)
	quiet = 2 * time.Second
	write(t, dir, "src/a.go", "package a // changed\n")
	saved, err := Save(dir, "Bash: go test")
	require.NoError(t, err)
	require.True(t, saved)
	r, err := open(dir)
	require.NoError(t, err)
	assert.Empty(t, r.readHead().walk)
	noGit(t)
	saved, err = Save(dir, "Bash: again")
	require.NoError(t, err)
	assert.False(t, saved)
}

// A nested repository is recorded by its commit: a commit in it, its files
// unchanged, is a change the digest sees.
func TestNestedRepositoryCommitSeen(t *testing.T) {
	dir := project(t)
	write(t, dir, "vendor/lib/lib.go", "package lib\n")
	run(t, dir+"/vendor/lib", "git init -q && git add -A && git commit -qm one")
	quietSave(t, dir)
	run(t, dir+"/vendor/lib", "git commit -q --allow-empty -m two")
	noGit(t)
	_, err := Save(dir, "Bash: go test")
	assert.Error(t, err, "a commit in a nested repository went unseen: no git ran")
}

// A tree past treecache's 20,000 entries keeps no digest ("-"), and its
// checkpoints go through git as before.
func TestTreeTooLargeToWalk(t *testing.T) {
	dir := project(t)
	run(t, dir, "mkdir many && cd many && seq 20001 | xargs touch")
	quietSave(t, dir)
	r, err := open(dir)
	require.NoError(t, err)
	assert.Equal(t, "-", r.readHead().walk)
	saved, err := Save(dir, "again")
	require.NoError(t, err)
	assert.False(t, saved, "nothing changed")
	write(t, dir, "src/a.go", "package a // changed\n")
	saved, err = Save(dir, "after a change")
	require.NoError(t, err)
	assert.True(t, saved, "the change is checkpointed")
	assert.Equal(t, "-", r.readHead().walk)
}

// A checkpoint's ref is written without git; the refs past Keep are
// deleted at the next collection, and List never shows more than Keep.
func TestOldRefsDroppedAtCollection(t *testing.T) {
	defer func(k, g int) { Keep, gcEvery = k, g }(Keep, gcEvery)
	Keep, gcEvery = 3, 4
	dir := project(t)
	refs := func() int {
		r, err := open(dir)
		require.NoError(t, err)
		out, err := r.git(nil, "for-each-ref", "--format=%(refname)", RefPrefix)
		require.NoError(t, err)
		return len(strings.Fields(out))
	}
	for i := 1; i <= 9; i++ {
		write(t, dir, "n.txt", fmt.Sprint(i))
		saved, err := Save(dir, fmt.Sprint("step ", i))
		require.NoError(t, err)
		require.True(t, saved)
		ps, err := List(dir)
		require.NoError(t, err)
		require.Len(t, ps, min(i, Keep))
		assert.Equal(t, fmt.Sprint("step ", i), ps[0].Message)
		switch i {
		case 7:
			assert.Equal(t, 6, refs(), "the fourth collected the first; none since")
		case 8:
			assert.Equal(t, 3, refs(), "the eighth collected: the three newest are left")
		}
	}
	ps, err := List(dir)
	require.NoError(t, err)
	// Each kept checkpoint still restores what it holds.
	_, err = Restore(dir, ps[2].N, "", "test")
	require.NoError(t, err)
	assert.Equal(t, "7", read(t, dir, "n.txt"))
}

// The first checkpoint streams the tree into one pack; the next ones write
// the objects of a step's change loose, and when loose objects pile up past
// git's own measure the collection comes early (at a tenth checkpoint).
func TestLooseObjectsAfterTheFirstAndCollectedEarly(t *testing.T) {
	defer func(k, g int) { Keep, gcEvery = k, g }(Keep, gcEvery)
	Keep, gcEvery = 3, 1000
	dir := project(t)
	r, err := open(dir)
	require.NoError(t, err)
	loose := func() int {
		out, err := r.git(nil, "count-objects")
		require.NoError(t, err)
		var n int
		fmt.Sscan(out, &n)
		return n
	}
	_, err = Save(dir, "first")
	require.NoError(t, err)
	packs, err := filepath.Glob(filepath.Join(r.dir, "objects", "pack", "*.pack"))
	require.NoError(t, err)
	assert.Len(t, packs, 1, "the first checkpoint's files in one pack")
	assert.Equal(t, 3, loose(), "the trees of the root and src, the commit, loose")
	write(t, dir, "src/a.go", "package a // changed\n")
	_, err = Save(dir, "second")
	require.NoError(t, err)
	assert.Equal(t, 7, loose(), "a blob, two trees, a commit more")
	assert.False(t, r.manyLoose())

	for i := 0; i < 28; i++ { // loose objects in objects/17, as git counts them
		for n := 0; ; n++ {
			body := []byte(fmt.Sprint(i, " ", n))
			if sum := blobID(body); sum[0] == 0x17 {
				_, err := r.writeObject("blob", body)
				require.NoError(t, err)
				break
			}
		}
	}
	require.True(t, r.manyLoose())
	for i := 3; i <= 10; i++ {
		write(t, dir, "n.txt", fmt.Sprint(i))
		saved, err := Save(dir, fmt.Sprint("step ", i))
		require.NoError(t, err)
		require.True(t, saved)
	}
	out, err := r.git(nil, "for-each-ref", "--format=%(refname)", RefPrefix)
	require.NoError(t, err)
	assert.Len(t, strings.Fields(out), Keep, "the tenth checkpoint collected early")
}

func blobID(body []byte) [20]byte {
	return digest.SHA1(append(fmt.Appendf(nil, "blob %d\x00", len(body)), body...))
}

// A checkpoint after a change walks the tree once: the walk before the
// lock (which saw that the tree changed) is what the checkpoint records
// and the next digest, and the next call, with nothing changed, runs no
// git. A change within the last two seconds makes no digest.
func TestChangedCheckpointWalksOnce(t *testing.T) {
	dir := quietProject(t)
	quiet = 30 * time.Millisecond
	walks := countWalks(t)
	write(t, dir, "src/a.go", "package a // changed\n")
	time.Sleep(60 * time.Millisecond) // past quiet: the change is not recent
	saved, err := Save(dir, "after a change")
	require.NoError(t, err)
	require.True(t, saved)
	assert.Equal(t, 1, *walks, "the walk before the checkpoint serves it")
	r, err := open(dir)
	require.NoError(t, err)
	h := r.readHead()
	want, racy, err := treecache.Digest(dir, h.tree, r.skip, time.Time{})
	require.NoError(t, err)
	require.False(t, racy)
	assert.Equal(t, want, h.walk, "the digest kept is the tree's")

	path := os.Getenv("PATH")
	noGit(t)
	saved, err = Save(dir, "nothing changed")
	require.NoError(t, err, "no git needed")
	assert.False(t, saved)
	assert.Equal(t, 2, *walks)
	t.Setenv("PATH", path)

	write(t, dir, "src/a.go", "package a // changed again\n")
	*walks = 0
	saved, err = Save(dir, "right after a change")
	require.NoError(t, err)
	require.True(t, saved)
	assert.Equal(t, 1, *walks, "before the lock, past the change: it serves the checkpoint")
	assert.Empty(t, r.readHead().walk, "a change this recent keeps no digest")
}

// countWalks counts the walks of the work tree until the test ends.
func countWalks(t *testing.T) *int {
	walks := new(int)
	all := walkAll
	t.Cleanup(func() { walkAll = all })
	walkAll = func(top string, skip func(string, bool) bool, since time.Time) (treecache.Tree, bool, error) {
		*walks++
		return all(top, skip, since)
	}
	return walks
}
