//go:build !windows

package shadow

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

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

// FIFOs planted in place of the repository's own files (where the agent can
// write the record) never make a hook wait.
func TestPlantedFIFOsDoNotBlock(t *testing.T) {
	dir := project(t)
	_, err := Save(dir, "first")
	require.NoError(t, err)
	for _, name := range []string{headName, errName, addingName, "harness-add.err", headName + ".tmp"} {
		p := filepath.Join(Dir(dir), name)
		os.Remove(p)
		require.NoError(t, syscall.Mkfifo(p, 0o644))
	}
	write(t, dir, "src/a.go", "changed")
	done := make(chan error, 1)
	go func() {
		_, err := Save(dir, "second")
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("Save blocked on a FIFO")
	}
	require.Empty(t, LastError(dir))
	ps, err := List(dir)
	require.NoError(t, err)
	require.Equal(t, "second", ps[0].Message)
}
