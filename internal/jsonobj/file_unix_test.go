//go:build unix

package jsonobj

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFile(t *testing.T) {
	for _, tc := range []struct {
		name, was, now string
		inPlace        bool // the file keeps its inode
	}{
		{"a count moved", `{"key":"12:345","count":7}`, `{"key":"12:346","count":8}`, true},
		{"the same text", `{"count":7}`, `{"count":7}`, true},
		{"a longer text", `{"count":7}`, `{"count":10}`, false},
		{"a member added", `{"count":7}`, `{"c":7,"n":1}`, false},
		{"no file yet", "", `{"count":7}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.json")
			var ino uint64
			if tc.was != "" {
				require.NoError(t, os.WriteFile(path, []byte(tc.was), 0o600))
				ino = inode(t, path)
			}
			require.NoError(t, WriteFile(path, []byte(tc.now), 0o600))
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.now, string(got))
			if tc.was != "" {
				assert.Equal(t, tc.inPlace, inode(t, path) == ino, "written in place")
			}
			leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"))
			assert.Empty(t, leftovers, "no temporary file left")
		})
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Sys().(*syscall.Stat_t).Ino
}
