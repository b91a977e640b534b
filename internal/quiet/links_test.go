//go:build linux || darwin || freebsd || netbsd

package quiet_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/quiet"
)

// A place is taken as it is only where no link lies on its way, and is
// then the directory filepath.EvalSymlinks names (the hook's root.Find);
// anything else is left to the hook.
func TestRealPathByLinks(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(base, "w/a/b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "w/file"), nil, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(base, "w/a"), filepath.Join(base, "link")))
	tests := []struct {
		name, path string
		found, ok  bool
	}{
		{"a directory", base + "/w/a/b", true, true},
		{"a file", base + "/w/file", true, true},
		{"the root", "/", true, true},
		{"doubled and trailing slashes", base + "//w/./a/", true, true},
		{"missing", base + "/w/nothing/b", false, true},
		{"under a file", base + "/w/file/b", false, true},
		{"a link on the way", base + "/link/b", false, false},
		{"a link at the end", base + "/link", false, false},
		{"a climb", base + "/w/a/../a", false, false},
		{"relative", "w/a", false, false},
		{"empty", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			real, found, ok := quiet.RealPathByLinks(tt.path)
			assert.Equal(t, tt.ok, ok, "ok")
			assert.Equal(t, tt.found, found, "found")
			if found {
				want, err := filepath.EvalSymlinks(tt.path)
				require.NoError(t, err)
				assert.Equal(t, want, real)
			} else {
				assert.Empty(t, real)
			}
		})
	}
}
