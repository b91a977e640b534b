package git

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Top finds the work tree top without git, and must say exactly what git
// says: in the top, below it, through a symlink, in a linked worktree and in
// a submodule; outside any repository both fail.
func TestTopAgreesWithGit(t *testing.T) {
	dir := repo(t, map[string]string{"a/b/file": "x"})
	sh(t, dir, "git worktree add -q ../wt-$(basename $PWD) && ln -s a/b linked")
	sub := repo(t, map[string]string{"s": "y"})
	sh(t, dir, "git -c protocol.file.allow=always submodule -q add "+sub+" mod")
	outside := t.TempDir()
	// A stray .git directory that is no repository: git walks past it.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a", "stray", ".git"), 0o755))

	for name, at := range map[string]string{
		"top":        dir,
		"below":      filepath.Join(dir, "a", "b"),
		"stray .git": filepath.Join(dir, "a", "stray"),
		"symlink":    filepath.Join(dir, "linked"),
		"worktree":   filepath.Join(filepath.Dir(dir), "wt-"+filepath.Base(dir)),
		"submodule":  filepath.Join(dir, "mod"),
	} {
		t.Run(name, func(t *testing.T) {
			want, err := Run(at, "rev-parse", "--show-toplevel")
			require.NoError(t, err)
			got, err := Top(at)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	t.Run("outside", func(t *testing.T) {
		_, err := Top(outside)
		assert.Error(t, err)
		t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(outside)) // git's own walk
		_, err = Top(outside)
		assert.Error(t, err)
	})
	t.Run("GIT_DIR asks git", func(t *testing.T) {
		t.Setenv("GIT_DIR", filepath.Join(dir, ".git"))
		t.Setenv("GIT_WORK_TREE", dir)
		got, err := Top(outside)
		require.NoError(t, err)
		assert.Equal(t, dir, got)
	})
}

// NearestTop finds the nearest .git entry by stat alone: a repository's
// directory or a worktree's file, from dir or any parent, "" without one.
func TestNearestTop(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	repo, linked := filepath.Join(base, "repo"), filepath.Join(base, "linked")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "a", "b"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(linked, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(linked, ".git"), []byte("gitdir: "+repo+"/.git/worktrees/l\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(base, "plain"), 0o755))
	tests := []struct{ dir, want string }{
		{repo, repo},
		{filepath.Join(repo, "a", "b"), repo},
		{filepath.Join(repo, "a", "missing"), repo},
		{filepath.Join(linked, "src"), linked},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, NearestTop(tt.dir), tt.dir)
	}
	if NearestTop("/") == "" { // a machine whose root is no repository
		assert.Empty(t, NearestTop(filepath.Join(base, "plain")))
	}
}
