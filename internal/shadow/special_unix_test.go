//go:build !windows

package shadow

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A FIFO or a socket in the tree (a dev server's, a test's) is no file to
// record, and no reason to lose the checkpoint of everything else.
func TestSpecialFilesAreSkipped(t *testing.T) {
	dir := project(t)
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	write(t, dir, "build/out.o", "x")
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "build", "ignored-pipe"), 0o644))
	saved, err := Save(dir, "Bash: make")
	require.NoError(t, err)
	require.True(t, saved)
	files := lsTree(t, dir)
	require.Contains(t, files, "src/a.go")
	require.NotContains(t, files, "pipe")
}
