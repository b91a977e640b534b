package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// planKey names a plan from its repository's top (a worktree's own, whose
// .git is a file), else from the state root, else by its path.
func TestPlanKey(t *testing.T) {
	top := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(top, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(top, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	tree := filepath.Join(top, ".worktrees", "w1")
	require.NoError(t, os.MkdirAll(tree, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(tree, ".git"), []byte("gitdir: "+filepath.Join(top, ".git", "worktrees", "w1")+"\n"), 0o644))
	plain := t.TempDir()
	for _, tc := range []struct{ name, path, root, want string }{
		{"in the repository", filepath.Join(top, "specs", "a", "tasks.md"), top, "specs/a/tasks.md"},
		{"state root below the top", filepath.Join(top, "app", "specs", "tasks.md"), filepath.Join(top, "app"), "app/specs/tasks.md"},
		{"in a worktree", filepath.Join(tree, "specs", "a", "tasks.md"), top, "specs/a/tasks.md"},
		{"no repository, under the root", filepath.Join(plain, "plans", "TODO.md"), plain, "plans/TODO.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.MkdirAll(filepath.Dir(tc.path), 0o755))
			require.NoError(t, os.WriteFile(tc.path, []byte("- [ ] x\n"), 0o644))
			assert.Equal(t, tc.want, planKey(tc.path, tc.root))
		})
	}
	assert.Equal(t, "/nowhere/TODO.md", planKey("/nowhere/TODO.md", plain), "no repository, elsewhere")
}
