package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(write("target", "via a link"), link))
	for _, tc := range []struct {
		name  string
		path  string
		limit int64
		want  string
		err   error
	}{
		{"regular", write("a", "hello"), 10, "hello", nil},
		{"empty", write("e", ""), 10, "", nil},
		{"exactly the limit", write("l", "12345"), 5, "12345", nil},
		{"larger than one read", write("big", strings.Repeat("x", 300<<10)), 1 << 20, strings.Repeat("x", 300<<10), nil},
		{"over the limit", write("o", "123456"), 5, "", ErrTooLarge},
		{"symlink to a regular file", link, 100, "via a link", nil},
		{"directory", dir, 100, "", ErrNotRegular},
		{"missing", filepath.Join(dir, "none"), 100, "", fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadFile(tc.path, tc.limit)
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestReadFileSparseOverLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(64<<20))
	require.NoError(t, f.Close())
	_, err = ReadFile(p, Small)
	assert.ErrorIs(t, err, ErrTooLarge)
	var pe *fs.PathError
	assert.True(t, errors.As(err, &pe))
}

// TestReadPart: the part asked for, from the size the open saw; shorter
// when the file ends first; nothing when part asks for nothing; an error
// for a missing file or a directory.
func TestReadPart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	require.NoError(t, os.WriteFile(path, []byte("0123456789"), 0o644))
	tail := func(n int64) func(int64) (int64, int64) {
		return func(size int64) (int64, int64) { return max(0, size-n), min(n, size) }
	}
	for _, tc := range []struct {
		name string
		part func(int64) (int64, int64)
		want string
	}{
		{"tail", tail(4), "6789"},
		{"tail longer than the file", tail(40), "0123456789"},
		{"middle", func(int64) (int64, int64) { return 2, 3 }, "234"},
		{"past the end: short", func(int64) (int64, int64) { return 8, 5 }, "89"},
		{"beyond the end: empty", func(int64) (int64, int64) { return 20, 5 }, ""},
		{"nothing asked", func(int64) (int64, int64) { return -1, 0 }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, size, err := ReadPart(path, tc.part)
			require.NoError(t, err)
			assert.Equal(t, int64(10), size)
			assert.Equal(t, tc.want, string(data))
		})
	}
	_, _, err := ReadPart(filepath.Join(dir, "missing"), tail(4))
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, _, err = ReadPart(dir, tail(4))
	assert.Error(t, err)
}
