package shadow

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-agent/harness/internal/git"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// treeRepo is a shadow repository over a fresh state root, made, and the
// git that runs on a copy of its index.
func treeRepo(t testing.TB) (repo, string) {
	t.Helper()
	dir := project(t)
	r, err := open(dir)
	require.NoError(t, err)
	require.NoError(t, r.ensure())
	return r, dir
}

// gitWriteTree runs `git write-tree` on a copy of the index, as it stands
// now, and returns the tree and the index git leaves.
func (r repo) gitWriteTree(t *testing.T) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.dir, "index"))
	require.NoError(t, err)
	copyPath := filepath.Join(t.TempDir(), "index")
	require.NoError(t, os.WriteFile(copyPath, data, 0o600))
	out, err := gitIndex(r, copyPath, "write-tree")
	require.NoError(t, err, out)
	after, err := os.ReadFile(copyPath)
	require.NoError(t, err)
	return out, after
}

func gitIndex(r repo, indexPath string, args ...string) (string, error) {
	env := append(r.env(), "GIT_INDEX_FILE="+indexPath)
	return gitEnv(r.root, env, args...)
}

// The tree written in process is git's, change after change: the same id
// as `git write-tree` on the same index, the same index bytes left behind
// (so git reads the cache of trees written), nothing for fsck to find, and
// the index's modification time as git add left it.
func TestWriteTreeIsGits(t *testing.T) {
	r, dir := treeRepo(t)
	rnd := mrand.New(mrand.NewPCG(7, 11))
	paths := []string{"a", "a.b", "a-b", "a/b", "a/b.c", "a/c/d", "a/c/e/f", "ab/c", "b", "c/d/e/f/g", "c/d/x", "z/a", "z/zz/a", "é/ü"}
	for step := range 40 {
		changeAtRandom(rnd, dir, paths, false)
		require.NoError(t, r.addAll(AddBudget), "step %d", step)
		before, err := os.Stat(filepath.Join(r.dir, "index"))
		require.NoError(t, err)
		want, gitIndexBytes := r.gitWriteTree(t)
		got, err := r.writeTree()
		require.NoError(t, err, "step %d", step)
		require.Equal(t, want, got, "step %d", step)
		ours, err := os.ReadFile(filepath.Join(r.dir, "index"))
		require.NoError(t, err)
		require.Equal(t, gitIndexBytes, ours, "step %d: the index git would have written", step)
		after, err := os.Stat(filepath.Join(r.dir, "index"))
		require.NoError(t, err)
		require.Equal(t, before.ModTime(), after.ModTime(), "step %d", step)
		out, err := r.git(nil, "diff-index", "--cached", "--name-only", got)
		require.NoError(t, err)
		require.Empty(t, out, "step %d: the tree is the index's", step)
	}
	out, err := r.git(nil, "fsck", "--strict", "--no-progress", "--no-dangling")
	require.NoError(t, err, out)
}

// changeAtRandom makes one to four changes among paths under dir: a path
// removed, made a symbolic link, or written as a file (now and then
// executable, in place of a directory); with more, also a mode flipped,
// or now and then a file past MaxIgnored.
func changeAtRandom(rnd *mrand.Rand, dir string, paths []string, more bool) {
	kinds := 5
	if more {
		kinds = 8
	}
	for range 1 + rnd.IntN(4) {
		full := filepath.Join(dir, paths[rnd.IntN(len(paths))])
		switch k := rnd.IntN(kinds); {
		case k == 0:
			os.RemoveAll(full)
		case k == 1:
			os.RemoveAll(full)
			if os.MkdirAll(filepath.Dir(full), 0o755) == nil {
				os.Symlink("target-"+fmt.Sprint(rnd.IntN(3)), full)
			}
		case more && k == 2:
			os.Chmod(full, os.FileMode(0o644|rnd.IntN(2)*0o111))
		case more && k == 3:
			if rnd.IntN(6) == 0 { // past the bound: git's rules decide
				os.RemoveAll(full)
				if os.MkdirAll(filepath.Dir(full), 0o755) == nil {
					os.WriteFile(full, bytes.Repeat([]byte("x"), MaxIgnored+1), 0o644)
				}
			}
		default:
			os.RemoveAll(full) // a directory where a file goes
			if os.MkdirAll(filepath.Dir(full), 0o755) == nil {
				mode := os.FileMode(0o644)
				if rnd.IntN(4) == 0 {
					mode = 0o755
				}
				os.WriteFile(full, []byte(fmt.Sprint(rnd.IntN(5))), mode)
			}
		}
	}
}

// Indexes this file does not read whole go to git, whose answer is the
// checkpoint's (a tree, or its refusal of a damaged index).
func TestWriteTreeLeavesOtherIndexesToGit(t *testing.T) {
	for name, prepare := range map[string]func(t *testing.T, r repo){
		"version 4": func(t *testing.T, r repo) {
			_, err := r.git(nil, "update-index", "--index-version", "4")
			require.NoError(t, err)
		},
		"end of entries extension": func(t *testing.T, r repo) {
			_, err := r.git(nil, "-c", "index.recordEndOfIndexEntries=true", "-c", "index.threads=2", "update-index", "--index-version", "2", "--force-write-index")
			require.NoError(t, err)
		},
		"intent to add": func(t *testing.T, r repo) {
			write(t, r.root, "new.txt", "new\n")
			_, err := r.git(nil, "add", "-N", "new.txt")
			require.NoError(t, err)
		},
	} {
		t.Run(name, func(t *testing.T) {
			r, dir := treeRepo(t)
			write(t, dir, "src/deep/c.go", "package deep\n")
			require.NoError(t, r.addAll(AddBudget))
			prepare(t, r)
			_, ok := readIndex(filepath.Join(r.dir, "index"))
			require.False(t, ok, "left to git")
			want, _ := r.gitWriteTree(t)
			got, err := r.writeTree()
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	for name, damage := range map[string]func([]byte) []byte{
		"cut short":                func(b []byte) []byte { return b[:len(b)/2] },
		"an entry's name too long": func(b []byte) []byte { b[12+61] = 0xff; return b },
		"an extension past the end": func(b []byte) []byte {
			i := bytes.LastIndex(b, []byte("TREE"))
			b[i+4] = 0x7f
			return b
		},
	} {
		t.Run(name, func(t *testing.T) {
			r, _ := treeRepo(t)
			require.NoError(t, r.addAll(AddBudget))
			_, err := r.writeTree() // a cache of trees in the index
			require.NoError(t, err)
			path := filepath.Join(r.dir, "index")
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			damaged := damage(data)
			require.NoError(t, os.WriteFile(path, damaged, 0o600))
			_, ok := readIndex(path)
			require.False(t, ok)
			copyPath := filepath.Join(t.TempDir(), "index")
			require.NoError(t, os.WriteFile(copyPath, damaged, 0o600))
			want, wantErr := gitIndex(r, copyPath, "write-tree")
			got, err := r.writeTree()
			assert.Equal(t, wantErr == nil, err == nil, "git's answer: %v", wantErr)
			assert.Equal(t, want, got)
		})
	}
}

// A cached tree whose count does not fit the entries around it (an index
// hand-edited, or written by a buggy tool) is computed again rather than
// trusted.
func TestWriteTreeRecomputesACacheThatDoesNotFit(t *testing.T) {
	r, dir := treeRepo(t)
	write(t, dir, "src/deep/c.go", "package deep\n")
	require.NoError(t, r.addAll(AddBudget))
	want, err := r.writeTree()
	require.NoError(t, err)
	path := filepath.Join(r.dir, "index")
	ix, ok := readIndex(path)
	require.True(t, ok)
	ix.tree.count = -1
	for _, s := range ix.tree.subs {
		if s.name == "src" {
			s.count++ // one entry too many: spills past src/
		}
	}
	require.NoError(t, ix.write(path))
	got, err := r.writeTree()
	require.NoError(t, err)
	assert.Equal(t, want, got)
	out, err := r.git(nil, "diff-index", "--cached", "--name-only", got)
	require.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(out))
}

func gitEnv(dir string, env []string, args ...string) (string, error) {
	return git.Cmd{Dir: dir, Env: env, Timeout: Timeout}.Run(args...)
}

// A loose object's zlib stream of stored blocks reads back whole, at every
// size around a block's bound, and git reads the objects (fsck above).
func TestStoredIsZlib(t *testing.T) {
	for _, n := range []int{0, 1, 100, 65534, 65535, 65536, 65535*2 + 7, 300000} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i * 7)
		}
		z, err := zlib.NewReader(bytes.NewReader(stored(data)))
		require.NoError(t, err, n)
		got, err := io.ReadAll(z)
		require.NoError(t, err, n)
		require.NoError(t, z.Close())
		assert.Equal(t, data, got, n)
	}
}

// A collection that drops every checkpoint leaves the next one whole, a
// subtree it takes from the index's cache included: git counts the index
// (GIT_INDEX_FILE, in every call's environment) as reachable.
func TestCachedTreesSurviveCollection(t *testing.T) {
	r, dir := treeRepo(t)
	write(t, dir, "lib/kept.go", "package lib\n")
	// Past the clock's tick: a file as new as the index is racily clean,
	// and git add would hash it again, hiding a missing object.
	time.Sleep(50 * time.Millisecond)
	_, err := Save(dir, "first")
	require.NoError(t, err)
	out, err := r.git(nil, "for-each-ref", "--format=delete %(refname)", RefPrefix)
	require.NoError(t, err)
	_, err = r.git([]byte(out+"\n"), "update-ref", "--stdin")
	require.NoError(t, err)
	_, err = r.git(nil, "gc", "--quiet", "--prune=now")
	require.NoError(t, err)

	write(t, dir, "src/a.go", "package a // changed\n")
	saved, err := Save(dir, "second")
	require.NoError(t, err)
	require.True(t, saved)
	out, err = r.git(nil, "fsck", "--strict", "--no-progress", "--no-dangling")
	require.NoError(t, err, out)
	ps, err := List(dir)
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "lib")))
	_, err = Restore(dir, ps[0].N, "", "test")
	require.NoError(t, err)
	assert.Equal(t, "package lib\n", read(t, dir, "lib/kept.go"))
}

// Whatever the index holds (the agent may write the record's directory
// when the sandbox is off), reading it and building its trees never
// panics and never loops: it is read whole or left to git.
func FuzzReadIndex(f *testing.F) {
	r, _ := treeRepo(f)
	write(f, r.root, "src/deep/c.go", "package deep\n")
	if err := r.addAll(AddBudget); err == nil {
		if _, err := r.writeTree(); err == nil {
			if data, err := os.ReadFile(filepath.Join(r.dir, "index")); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00" + strings.Repeat("\x00", 20)))
	f.Fuzz(func(t *testing.T, data []byte) {
		work := t.TempDir()
		path := filepath.Join(work, "index")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		ix, ok := readIndex(path)
		if !ok {
			return
		}
		objects := repo{dir: work}
		if _, err := objects.buildTree(ix.tree, ix.entries, ""); err == nil {
			require.NoError(t, ix.write(path))
			again, ok := readIndex(path)
			require.True(t, ok, "an index written is read back")
			assert.Equal(t, len(ix.entries), len(again.entries))
		}
	})
}

// Each cached subtree is found by its name, as git orders them (by
// length, then bytes), not recomputed.
func TestCachedSubtreesFoundByName(t *testing.T) {
	r, dir := treeRepo(t)
	for _, d := range []string{"b", "a", "ab", "zz", "abc", "é"} {
		write(t, dir, d+"/f", d)
	}
	require.NoError(t, r.addAll(AddBudget))
	_, err := r.writeTree()
	require.NoError(t, err)
	ix, ok := readIndex(filepath.Join(r.dir, "index"))
	require.True(t, ok)
	require.Len(t, ix.tree.subs, 7, "the six and src")
	for _, s := range ix.tree.subs {
		assert.Same(t, s, ix.tree.sub(s.name), s.name)
	}
	assert.Equal(t, -1, ix.tree.sub("nope").count)
}
