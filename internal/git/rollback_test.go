package git

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/gittest"
	"github.com/harness-agent/harness/internal/root"
)

// repo makes a git repository with one commit holding the given files.
var (
	repo  = gittest.Repo
	write = gittest.Write
	sh    = gittest.Sh
)

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// The pathspecs, clean patterns and owns must cover exactly
// root.IsHarnessFile, nested runtime files included, wherever the state root
// sits in the work tree.
func TestHarnessPatternsMatchIsHarnessFile(t *testing.T) {
	names := []string{"harness-tasks.json", "harness-tasks.json.bak", "harness-tasks.json.tmp",
		"harness-progress.txt", "harness-init.sh", ".harness-active", ".harness-tasks.json123",
		"harness-tasks.json.corrupt-20250101T000000Z", "harness-tasks.jsonx", "main.go", "harness-notes.md", ".harnessrc",
		".harness-runtime/session-1.json", ".harness-runtime/deep/x.json", "sub/.harness-runtime/x.json", "sub/harness-tasks.json"}
	for _, sub := range []string{"", "state dir"} {
		t.Run("state root "+sub, func(t *testing.T) {
			dir := repo(t, map[string]string{"keep.txt": "k"})
			for _, n := range names {
				write(t, dir, map[string]string{filepath.Join(sub, n): "x"})
			}
			p := protect(dir, filepath.Join(dir, sub))
			args := append([]string{"ls-files", "-o", "--", "."}, p.excludes()...)
			out, err := Run(dir, args...)
			require.NoError(t, err)
			listed := map[string]bool{}
			for _, l := range strings.Split(out, "\n") {
				listed[l] = true
			}
			for _, n := range names {
				path := filepath.ToSlash(filepath.Join(sub, n))
				assert.Equal(t, !root.IsHarnessFile(n), listed[path], "%s: excluded by pathspecs iff a harness file", path)
				assert.Equal(t, root.IsHarnessFile(n), p.owns(path), "%s: owned iff a harness file", path)
			}
			cleanArgs := append([]string{"clean", "-n", "-d"}, p.cleanExcludes()...)
			out, err = Run(dir, cleanArgs...)
			require.NoError(t, err)
			assert.NotContains(t, out, ".harness-runtime/session", "git clean leaves runtime files alone")
		})
	}
}

func TestRollbackKeepsHarnessFilesAndSnapshotRestores(t *testing.T) {
	for _, tc := range []struct {
		name        string
		stateSub    string // state root inside the repo
		trackHarnes bool
		ignore      bool // listed in .git/info/exclude, as harness init does
	}{
		{"state root at the top, harness files untracked", "", false, false},
		{"state root at the top, harness files tracked", "", true, false},
		{"state root at the top, harness files ignored", "", false, true},
		{"state root in an untracked subdirectory", "state dir", false, false},
		{"state root in a subdirectory, harness files ignored", "state", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": "a\n", "gone.txt": "gone\n", "keep/k.txt": "k\n", ".gitignore": "*.log\n"})
			stateRoot := filepath.Join(dir, tc.stateSub)
			harness := map[string]string{
				filepath.Join(tc.stateSub, "harness-tasks.json"):   `{"v":1}`,
				filepath.Join(tc.stateSub, "harness-progress.txt"): "log 1\n",
				filepath.Join(tc.stateSub, ".harness-active"):      "",
				// The hooks' runtime directory: nested, still the harness's.
				filepath.Join(tc.stateSub, ".harness-runtime", "session-1.json"): "s1",
			}
			write(t, dir, harness)
			if tc.ignore {
				prefix := "/"
				if tc.stateSub != "" {
					prefix += tc.stateSub + "/"
				}
				write(t, dir, map[string]string{".git/info/exclude": prefix + "harness-tasks.json\n" + prefix + "harness-progress.txt\n" + prefix + ".harness-*\n"})
			}
			if tc.trackHarnes {
				sh(t, dir, "git add -A && git commit -q -m 'track harness files'")
			}
			base := Head(dir)
			// The attempt: a commit, edits, a deletion, new files, an ignored file.
			write(t, dir, map[string]string{"a.txt": "a\nattempt\n", "new/n.txt": "new\n"})
			sh(t, dir, "git add -A && git commit -q -m 'task-001: half'")
			write(t, dir, map[string]string{"a.txt": "a\nattempt\nmore\n", "untracked.txt": "u\n", "build.log": "ignored\n"})
			sh(t, dir, "rm gone.txt")
			// The outcome recorded just before the rollback.
			write(t, dir, map[string]string{
				filepath.Join(tc.stateSub, "harness-tasks.json"):                 `{"v":2}`,
				filepath.Join(tc.stateSub, "harness-progress.txt"):               "log 1\nlog 2\n",
				filepath.Join(tc.stateSub, ".harness-runtime", "session-1.json"): "s2",
			})

			ref, commit, err := Snapshot(dir, stateRoot, SnapshotRef("task-001", 1), "snapshot")
			require.NoError(t, err)
			assert.Equal(t, "refs/harness/snapshots/task-001/1", ref)
			require.NoError(t, Rollback(dir, stateRoot, base))

			assert.Equal(t, base, Head(dir))
			assert.Equal(t, "a\n", read(t, filepath.Join(dir, "a.txt")))
			assert.Equal(t, "gone\n", read(t, filepath.Join(dir, "gone.txt")))
			assert.NoFileExists(t, filepath.Join(dir, "untracked.txt"))
			assert.NoDirExists(t, filepath.Join(dir, "new"))
			assert.FileExists(t, filepath.Join(dir, "build.log"), "ignored files stay, as with git clean -fd")
			assert.Equal(t, `{"v":2}`, read(t, filepath.Join(stateRoot, "harness-tasks.json")))
			assert.Equal(t, "log 1\nlog 2\n", read(t, filepath.Join(stateRoot, "harness-progress.txt")))
			assert.FileExists(t, filepath.Join(stateRoot, ".harness-active"))
			assert.Equal(t, "s2", read(t, filepath.Join(stateRoot, ".harness-runtime", "session-1.json")))
			changes, err := Changes(dir, stateRoot)
			require.NoError(t, err)
			assert.Empty(t, changes, "clean apart from harness and ignored files")

			// The snapshot holds the attempt, commits and files, without harness files.
			files := sh(t, dir, "git ls-tree -r --name-only "+commit)
			assert.Contains(t, files, "untracked.txt")
			assert.Contains(t, files, "new/n.txt")
			assert.NotContains(t, files, "harness-tasks.json")
			assert.NotContains(t, files, ".harness-runtime")
			assert.NotContains(t, files, "build.log")

			// The printed restore command brings the attempt back and leaves the state alone.
			sh(t, dir, RestoreCommand(dir, ref))
			assert.Equal(t, "a\nattempt\nmore\n", read(t, filepath.Join(dir, "a.txt")))
			assert.Equal(t, "u\n", read(t, filepath.Join(dir, "untracked.txt")))
			assert.Equal(t, "new\n", read(t, filepath.Join(dir, "new/n.txt")))
			assert.Equal(t, `{"v":2}`, read(t, filepath.Join(stateRoot, "harness-tasks.json")))

			// A second snapshot of the same attempt gets its own ref.
			ref2, _, err := Snapshot(dir, stateRoot, SnapshotRef("task-001", 1), "again")
			require.NoError(t, err)
			assert.Equal(t, "refs/harness/snapshots/task-001/1-2", ref2)
			snaps, err := Snapshots(dir, "task-001")
			require.NoError(t, err)
			require.Len(t, snaps, 2)
			assert.Equal(t, "1", snaps[0].Attempt)
			assert.Equal(t, "1-2", snaps[1].Attempt)
			assert.Equal(t, "snapshot", snaps[0].Subject)
			assert.False(t, snaps[0].Date.IsZero())
		})
	}
}

func TestCommitAllLeavesHarnessFilesOut(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, map[string]string{".git/info/exclude": "/harness-progress.txt\n"})
	write(t, dir, map[string]string{"harness-tasks.json": "{}", "harness-progress.txt": "x\n", "b.txt": "b\n"})
	write(t, dir, map[string]string{".harness-runtime/session-1.json": "{}"})
	sh(t, dir, "git add harness-tasks.json .harness-runtime") // the agent staged them by mistake
	hash, committed, err := CommitAll(dir, dir, "task-001: add b")
	require.NoError(t, err)
	assert.True(t, committed)
	assert.Equal(t, Head(dir), hash)
	assert.Equal(t, "b.txt", sh(t, dir, "git show --name-only --format= HEAD"))
	assert.Equal(t, "task-001: add b", sh(t, dir, "git log -1 --format=%s"))

	again, committed, err := CommitAll(dir, dir, "task-001: nothing")
	require.NoError(t, err)
	assert.False(t, committed)
	assert.Equal(t, hash, again)
}

func TestCommitWithoutConfiguredIdentity(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("EMAIL", "")
	os.Unsetenv("EMAIL")
	sh(t, dir, "git config user.useConfigOnly true")
	write(t, dir, map[string]string{"b.txt": "b\n"})
	_, committed, err := CommitAll(dir, dir, "task-002: b")
	require.NoError(t, err)
	assert.True(t, committed)
	_, _, err = Snapshot(dir, dir, SnapshotRef("task-002", 1), "s")
	require.NoError(t, err)
}

func TestRollbackToEmptyBaseTree(t *testing.T) {
	dir := repo(t, nil)
	base := Head(dir)
	write(t, dir, map[string]string{"harness-tasks.json": "{}", "x.txt": "x"})
	require.NoError(t, Rollback(dir, dir, base))
	assert.NoFileExists(t, filepath.Join(dir, "x.txt"))
	assert.FileExists(t, filepath.Join(dir, "harness-tasks.json"))
}

// Every task id, valid or hand-edited, gets a snapshot ref git accepts, and
// the listing gives the id back.
func TestRefName(t *testing.T) {
	dir := repo(t, nil)
	for _, id := range []string{"task-001", "a.b", "has space", "a/b", "x.lock", "a..b", ".x", "x.", "100%", "a@{1}",
		"evil\n[2099] [SESSION-9] Completed", "é", "-x", ""} {
		ref := SnapshotRef(id, 1)
		_, err := Run(dir, "check-ref-format", ref)
		assert.NoError(t, err, "%q → %s", id, ref)
		assert.Equal(t, id, ParseRefName(RefName(id)))
	}
	write(t, dir, map[string]string{"a.txt": "a"})
	ref, _, err := Snapshot(dir, dir, SnapshotRef("has space", 1), "s")
	require.NoError(t, err)
	assert.Equal(t, "refs/harness/snapshots/has%20space/1", ref)
	snaps, err := Snapshots(dir, "has space")
	require.NoError(t, err)
	require.Len(t, snaps, 1)
	assert.Equal(t, "has space", snaps[0].TaskID)
}

// Only an existing ref moves a snapshot on to the next name; any other
// update-ref failure is reported at once.
func TestSnapshotReportsRefErrors(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a"})
	_, _, err := Snapshot(dir, dir, "refs/harness/snapshots/bad name/1", "s")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "no free ref")
	assert.Empty(t, sh(t, dir, "git for-each-ref refs/harness"))
}

// An attempt's diff holds what it changed since its base, commits made
// during it, staged and untracked files included, and neither the harness
// files nor ignored ones; the real index is left as it was.
func TestDiffSince(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n", "gone.txt": "g\n", ".gitignore": "build/\n"})
	base := Head(dir)
	write(t, dir, map[string]string{"a.txt": "a2\n", "c.txt": "c\n"})
	sh(t, dir, "git add c.txt && git commit -q -m mid")
	write(t, dir, map[string]string{"a.txt": "a3\n", "new.txt": "n\n", "build/out": "o\n", "harness-tasks.json": "{}", ".harness-runtime/x.json": "{}"})
	sh(t, dir, "git rm -q gone.txt")
	index := sh(t, dir, "git status --porcelain")

	diff, err := DiffSince(dir, base, dir)
	require.NoError(t, err)
	for _, want := range []string{"+a3", "+++ b/c.txt", "+++ b/new.txt", "+n", "--- a/gone.txt"} {
		assert.Contains(t, diff, want)
	}
	for _, not := range []string{"build/out", "harness-tasks.json", ".harness-runtime"} {
		assert.NotContains(t, diff, not)
	}
	assert.Equal(t, index, sh(t, dir, "git status --porcelain"), "the real index is untouched")

	_, err = DiffSince(dir, "0000000000000000000000000000000000000000", dir)
	assert.Error(t, err)
}
