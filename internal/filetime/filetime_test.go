//go:build linux || openbsd || dragonfly || darwin || freebsd || netbsd

package filetime_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/filetime"
)

// The times are the file's: its modification time as os reads it, set
// back by hand, and its change time, which setting it moved to now.
func TestOf(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(name, []byte("x"), 0o644))
	then := time.Date(2020, 5, 17, 10, 30, 0, 123456789, time.UTC)
	before := time.Now()
	require.NoError(t, os.Chtimes(name, then, then))
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(name, &st))
	change, modify := filetime.Of(&st)
	fi, err := os.Stat(name)
	require.NoError(t, err)
	assert.Equal(t, fi.ModTime().UnixNano(), time.Unix(int64(modify.Sec), int64(modify.Nsec)).UnixNano())
	assert.Equal(t, then.Unix(), int64(modify.Sec))
	assert.False(t, time.Unix(int64(change.Sec), int64(change.Nsec)).Before(before.Add(-time.Second)), "the change time is the Chtimes call's")
}
