package treecache

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/gittest"
)

// fixture is a repository with a tracked file, an ignored directory, an
// ignore pattern, an empty directory and the harness's files, and a kept
// answer made by a first call.
func fixture(t *testing.T) (dir, kept string) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", "")
	dir = gittest.Repo(t, map[string]string{"src/a.go": "package src\n", ".gitignore": "build/\n*.log\n", "build/out": "o\n"})
	run(t, dir, `mkdir empty && echo '{}' >harness-tasks.json && echo log >harness-progress.txt && mkdir .harness-runtime && echo r >.harness-runtime/x`)
	kept = filepath.Join(t.TempDir(), "tree")
	racyWindow = 0 // the fixture was written a moment ago
	t.Cleanup(func() { racyWindow = 2 * time.Second })
	time.Sleep(20 * time.Millisecond) // past the clock's tick: a later write has a later time
	got, err := Changes(dir, dir, kept)
	require.NoError(t, err)
	assert.Empty(t, got)
	require.FileExists(t, kept, "a quiet tree's answer is kept")
	return dir, kept
}

func run(t *testing.T, dir, script string) { gittest.Sh(t, dir, script) }

// served reports whether Changes answered without git: git is taken off
// PATH, so asking it fails.
func served(t *testing.T, dir, kept string) ([]string, bool) {
	t.Helper()
	t.Setenv("PATH", t.TempDir())
	got, err := Changes(dir, dir, kept)
	return got, err == nil
}

func TestKeptAnswerHoldsUntilSomethingGitReadsChanges(t *testing.T) {
	cases := []struct {
		name   string
		change string // a shell script run in the tree after the answer was kept
		served bool   // the kept answer still holds
	}{
		{name: "nothing changed", served: true},
		{name: "the harness's own files", change: `echo more >>harness-progress.txt && echo y >.harness-runtime/y && echo '{"a":1}' >harness-tasks.json.tmp && mv harness-tasks.json.tmp harness-tasks.json`, served: true},
		{name: "a file in an ignored directory", change: `echo p >build/more`, served: true},
		{name: "a tracked file, its size", change: `echo more >>src/a.go`},
		{name: "a tracked file, same size", change: `echo 'package sr' >src/a.go`},
		{name: "a tracked file's mode", change: `chmod +x src/a.go`},
		{name: "a tracked file removed", change: `rm src/a.go`},
		{name: "a new file", change: `echo n >src/b.go`},
		{name: "a new file an ignore pattern matches", change: `echo n >src/debug.log`},
		{name: "a file in an empty directory", change: `echo n >empty/f`},
		{name: "a new directory", change: `mkdir src/sub`},
		{name: "the ignore rules", change: `echo '*.go' >>.gitignore`},
		{name: "the index (git add)", change: `echo n >n && git add n && rm n`},
		{name: "HEAD (a commit)", change: `git commit -q --allow-empty -m next`},
		{name: "the repository's exclude file", change: `echo '*.md' >>.git/info/exclude`},
		{name: "the repository's configuration", change: `git config core.ignorecase true`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, kept := fixture(t)
			if c.change != "" {
				run(t, dir, c.change)
			}
			want, werr := git.Changes(dir, dir) // git's answer, before PATH is emptied
			require.NoError(t, werr)
			got, ok := served(t, dir, kept)
			assert.Equal(t, c.served, ok, "served from the kept answer")
			if ok {
				assert.Equal(t, want, got)
			}
		})
	}
}

// After git was asked again, its new answer is kept and served. The tree
// is walked once for it: the walk that found the change is the new
// digest. A change of the ignored paths needs a walk of its own.
func TestNewAnswerKept(t *testing.T) {
	walks := 0
	defer func(w func(string, func(string, bool) bool, time.Time) (string, bool, error)) { walkTree = w }(walkTree)
	walkTree = func(top string, skip func(string, bool) bool, since time.Time) (string, bool, error) {
		walks++
		return Walk(top, skip, since)
	}
	for _, c := range []struct {
		change string
		walks  int
	}{
		{`echo n >src/b.go && echo more >>src/a.go`, 1},
		{`echo n >src/debug.log`, 2}, // ignored now: not in the walk git's answer rests on
	} {
		t.Run(c.change, func(t *testing.T) {
			dir, kept := fixture(t)
			run(t, dir, c.change)
			time.Sleep(20 * time.Millisecond)
			walks = 0
			got, err := Changes(dir, dir, kept)
			require.NoError(t, err)
			assert.Equal(t, c.walks, walks)
			want, err := git.Changes(dir, dir)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			again, ok := served(t, dir, kept)
			require.True(t, ok)
			assert.Equal(t, got, again)
		})
	}
}

// A change within the racy window is not kept: a later write in the same
// tick of the clock would keep the file's time. The stale answer goes too.
func TestRecentChangeNotKept(t *testing.T) {
	dir, kept := fixture(t)
	racyWindow = 2 * time.Second
	run(t, dir, `echo more >>src/a.go`)
	got, err := Changes(dir, dir, kept)
	require.NoError(t, err)
	assert.Equal(t, []string{"src/a.go"}, got)
	assert.NoFileExists(t, kept, "the new answer was not kept, and the old one is gone")
	_, ok := served(t, dir, kept)
	assert.False(t, ok, "the next call asks git again")
}

// A walk asked about a window stops at the first entry changed in it (its
// digest would not be kept anyway); without one, or when nothing is that
// recent, it walks the whole tree.
func TestDigestStopsAtARecentChange(t *testing.T) {
	dir, _ := fixture(t)
	since := time.Now() // the fixture's writes are older
	time.Sleep(20 * time.Millisecond)
	var names []string
	skip := func(rel string, dir bool) bool {
		names = append(names, rel)
		return false
	}
	sum, racy, err := Digest(dir, "s", skip, since)
	require.NoError(t, err)
	assert.False(t, racy)
	assert.NotEmpty(t, sum)
	all := len(names)
	require.Greater(t, all, 2)

	names = nil
	run(t, dir, `echo '# more' >>.gitignore`) // the first entry walked
	sum, racy, err = Digest(dir, "s", skip, since)
	require.NoError(t, err)
	assert.True(t, racy)
	assert.Empty(t, sum)
	assert.Equal(t, []string{".gitignore"}, names, "nothing walked past the change")
}

// WalkAll walks the whole tree past a recent change and says it met one;
// its files are those the listing holds, and a nested repository is said.
func TestWalkAllGoesOnPastARecentChange(t *testing.T) {
	dir, _ := fixture(t)
	since := time.Now()
	time.Sleep(20 * time.Millisecond)
	skip := func(string, bool) bool { return false }
	quiet, racy, err := WalkAll(dir, skip, since)
	require.NoError(t, err)
	assert.False(t, racy)
	assert.False(t, quiet.Nested)
	listing, _, err := Walk(dir, skip, since)
	require.NoError(t, err)
	assert.Equal(t, listing, quiet.Listing, "Walk's listing")

	run(t, dir, `echo '# more' >>.gitignore && git init -q sub && mkdir -p sub2 && touch sub2/new`) // the first entry walked
	tree, racy, err := WalkAll(dir, skip, since)
	require.NoError(t, err)
	assert.True(t, racy)
	assert.True(t, tree.Nested)
	var paths []string
	for _, f := range tree.Files {
		paths = append(paths, f.Path)
	}
	assert.Contains(t, paths, "sub2/new", "walked past the change")
	assert.Len(t, tree.Files, len(quiet.Files)+1)
}

// A damaged or foreign kept file, a tree with submodules, or no file at all:
// git is asked, nothing breaks.
func TestGitAskedWhenNotSure(t *testing.T) {
	t.Run("damaged kept file", func(t *testing.T) {
		for _, junk := range []string{"", "harness-tree 1\x00", "harness-tree 1\x00abc\x0099\x00", strings.Repeat("\x00", 100), "harness-tree 1\x00" + strings.Repeat("a", 64) + "\x00-1\x00"} {
			t.Run("", func(t *testing.T) {
				dir, kept := fixture(t)
				require.NoError(t, os.WriteFile(kept, []byte(junk), 0o600))
				_, ok := served(t, dir, kept)
				assert.False(t, ok, "%q", junk)
			})
		}
	})
	t.Run("submodules", func(t *testing.T) {
		dir, kept := fixture(t)
		run(t, dir, `: >.gitmodules && git add .gitmodules && git commit -qm mods`)
		time.Sleep(20 * time.Millisecond)
		_, err := Changes(dir, dir, kept)
		require.NoError(t, err)
		_, ok := served(t, dir, kept)
		assert.False(t, ok)
	})
	t.Run("a tree past the bound", func(t *testing.T) {
		dir, kept := fixture(t)
		maxEntries = 3
		t.Cleanup(func() { maxEntries = 20000 })
		run(t, dir, `echo n >src/b.go`)
		time.Sleep(20 * time.Millisecond)
		got, err := Changes(dir, dir, kept)
		require.NoError(t, err)
		assert.Equal(t, []string{"src/b.go"}, got)
		assert.True(t, tooBig(kept), "the tree is said too large, so the next call walks nothing")
		_, ok := served(t, dir, kept)
		assert.False(t, ok, "git is asked")
	})
	t.Run("a walk past its time", func(t *testing.T) {
		dir, kept := fixture(t)
		walkBudget = 0
		t.Cleanup(func() { walkBudget = 500 * time.Millisecond })
		run(t, dir, `mkdir many && for i in $(seq 300); do : >many/f$i; done`)
		time.Sleep(20 * time.Millisecond)
		got, err := Changes(dir, dir, kept)
		require.NoError(t, err)
		assert.Len(t, got, 300)
		assert.True(t, tooBig(kept), "a walk out of time is a tree too large: no answer kept")
	})
	t.Run("no kept file", func(t *testing.T) {
		dir, _ := fixture(t)
		got, err := Changes(dir, dir, "")
		require.NoError(t, err)
		assert.Empty(t, got)
	})
	t.Run("not a repository", func(t *testing.T) {
		_, err := Changes(t.TempDir(), "", filepath.Join(t.TempDir(), "tree"))
		assert.Error(t, err)
	})
}

// BenchmarkKept is a session start's check when nothing changed: the
// repository's state and a walk of the tree, against the kept digest, for
// trees of 25 and 2,000 files (go test -bench Kept ./internal/treecache).
func BenchmarkKept(b *testing.B) {
	for _, n := range []int{25, 2000} {
		b.Run(strconv.Itoa(n)+" files", func(b *testing.B) {
			dir := b.TempDir()
			b.Setenv("HOME", b.TempDir())
			b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			script := `git init -q && for d in $(seq 0 9); do mkdir -p src/d$d; done && for i in $(seq ` + strconv.Itoa(n) + `); do echo "package p // $i" >src/d$((i % 10))/f$i.go; done && git add -A && git -c user.name=b -c user.email=b@example.com commit -qm base`
			cmd := exec.Command("sh", "-c", script)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v\n%s", err, out)
			}
			kept := filepath.Join(b.TempDir(), "tree")
			racyWindow = 0
			defer func() { racyWindow = 2 * time.Second }()
			time.Sleep(20 * time.Millisecond)
			if _, err := Changes(dir, dir, kept); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Changes(dir, dir, kept); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWalk is Walk alone over 10,000 files in 100 directories: what
// a shadow checkpoint's check costs a large tree (go test -bench Walk
// ./internal/treecache).
func BenchmarkWalk(b *testing.B) {
	dir := b.TempDir()
	for i := range 10_000 {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%05d.go", i))
		require.NoError(b, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(b, os.WriteFile(p, []byte("package p\n"), 0o644))
	}
	skip := func(string, bool) bool { return false }
	b.Run("Walk", func(b *testing.B) {
		for range b.N {
			if _, _, err := Walk(dir, skip, time.Time{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("WalkAll", func(b *testing.B) {
		for range b.N {
			if _, _, err := WalkAll(dir, skip, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// WalkAll lists a tree as Walk does, its stats taken on several threads
// past parallelStats files: the same listing, and its files in the
// listing's order.
func TestWalkAllListsAsWalk(t *testing.T) {
	for _, n := range []int{10, parallelStats * 3} {
		t.Run(fmt.Sprint(n, " files"), func(t *testing.T) {
			dir := t.TempDir()
			for i := range n {
				p := filepath.Join(dir, fmt.Sprintf("d%d", i%7), fmt.Sprintf("e%d", i%3), fmt.Sprintf("f%d", i))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(fmt.Sprint(i)), 0o644))
			}
			require.NoError(t, os.Symlink("d0", filepath.Join(dir, "link")))
			run(t, dir, "git init -q d1/nested && mkdir skipped && touch skipped/x top.log")
			skip := func(rel string, dir bool) bool { return rel == "skipped" || rel == "top.log" }
			want, racy, err := Walk(dir, skip, time.Time{})
			require.NoError(t, err)
			require.False(t, racy)
			got, racy, err := WalkAll(dir, skip, time.Time{})
			require.NoError(t, err)
			assert.False(t, racy)
			assert.Equal(t, want, got.Listing)
			assert.True(t, got.Nested)
			require.Len(t, got.Files, n+1) // and the link
			for i, f := range got.Files {
				require.NotNil(t, f.Info, f.Path)
				assert.Equal(t, filepath.Base(f.Path), f.Info.Name())
				if i > 0 && filepath.Dir(f.Path) == filepath.Dir(got.Files[i-1].Path) {
					assert.Less(t, got.Files[i-1].Path, f.Path, "by name within a directory")
				}
			}
		})
	}
}
