package git

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Available keeps a git found for its PATH, and looks again for one
// missing (installed since) or on another PATH.
func TestAvailableLooksAgainWhenItMayHaveChanged(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands in for git")
	}
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	assert.False(t, Available())
	require.NoError(t, os.WriteFile(filepath.Join(empty, "git"), []byte("#!/bin/sh\n"), 0o755))
	assert.True(t, Available(), "installed since")
	require.NoError(t, os.Remove(filepath.Join(empty, "git")))
	assert.True(t, Available(), "kept for the same PATH")
	t.Setenv("PATH", t.TempDir())
	assert.False(t, Available(), "another PATH")
}
