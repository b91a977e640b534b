//go:build unix

package safefile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// returns runs call and gives its error, failing the test when call has
// not returned within 10 s (a hang: an open waiting on a FIFO, say).
func returns(t *testing.T, what string, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
		return nil
	}
}

// TestOpenNeverWaits: a FIFO with no writer (whose plain open would wait
// forever), a device that never ends and a socket are refused at once, by
// every way of opening a file to read or patch it.
func TestOpenNeverWaits(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	sock := filepath.Join(dir, "sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	defer syscall.Close(fd)
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}))
	for path, what := range map[string]string{fifo: "a FIFO", "/dev/zero": "a device", "/dev/null": "a device", sock: ""} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			for name, read := range map[string]func() error{
				"ReadFile": func() error { _, err := ReadFile(path, Small); return err },
				"ReadPart": func() error {
					_, _, err := ReadPart(path, func(size int64) (int64, int64) { return 0, 4096 })
					return err
				},
				"OpenFile": func() error {
					f, err := OpenFile(path, os.O_RDWR, 0)
					if err == nil {
						f.Close()
					}
					return err
				},
			} {
				err := returns(t, name+"("+path+")", read)
				require.Error(t, err, name)
				if what != "" { // (a socket's open itself fails: ENXIO)
					assert.ErrorIs(t, err, ErrNotRegular, name)
					assert.ErrorContains(t, err, what, name)
				}
			}
		})
	}
}

// TestAppendNeverWaits: a FIFO (no reader: a plain write open would wait
// forever) and a directory are refused; a missing file is created.
func TestAppendNeverWaits(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, path := range []string{fifo, dir, "/dev/null"} {
		err := returns(t, "Append("+path+")", func() error {
			f, err := Append(path, 0o644)
			if err == nil {
				f.Close()
			}
			return err
		})
		assert.Error(t, err, path)
	}
	f, err := Append(filepath.Join(dir, "new"), 0o644)
	require.NoError(t, err)
	_, err = f.WriteString("line\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestReadDirNeverWaits: a FIFO where a directory should be (whose plain
// open would wait for a writer forever) and a regular file are refused at
// once; a directory is listed.
func TestReadDirNeverWaits(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, path := range []string{fifo, file} {
		err := returns(t, "ReadDir("+path+")", func() error {
			_, err := ReadDir(path)
			return err
		})
		assert.ErrorContains(t, err, "not a directory")
	}
	entries, err := ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	assert.Equal(t, "fifo", entries[0].Name())
}

// TestTouch: a missing mark is made, a regular one keeps its bytes, and
// both get the time given; a FIFO in its place (whose write open waits for
// a reader) and a symlink (through which a write would reach another file)
// are replaced by a mark of its own, the link's target untouched; a
// directory is refused.
func TestTouch(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep me"), 0o644))
	victimTime := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, os.Chtimes(victim, victimTime, victimTime))
	for name, setup := range map[string]func(path string){
		"missing": func(string) {},
		"regular": func(p string) { require.NoError(t, os.WriteFile(p, []byte("x"), 0o644)) },
		"fifo":    func(p string) { require.NoError(t, syscall.Mkfifo(p, 0o644)) },
		"symlink": func(p string) { require.NoError(t, os.Symlink(victim, p)) },
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			setup(path)
			require.NoError(t, returns(t, "Touch("+name+")", func() error { return Touch(path, at) }))
			fi, err := os.Lstat(path)
			require.NoError(t, err)
			assert.True(t, fi.Mode().IsRegular(), fi.Mode().String())
			assert.True(t, fi.ModTime().Equal(at), fi.ModTime().String())
			if name == "regular" {
				data, _ := os.ReadFile(path)
				assert.Equal(t, "x", string(data))
			}
		})
	}
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep me", string(data), "the link's target was written")
	fi, err := os.Stat(victim)
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Equal(victimTime), "the link's target was touched")
	assert.ErrorIs(t, Touch(t.TempDir(), at), ErrNotRegular)
}

// A symlink put in a mark's place between Touch's open and its setting of
// the times gets its own times set, never its target's.
func TestSetTimesNeverFollows(t *testing.T) {
	dir := t.TempDir()
	victim, link := filepath.Join(dir, "victim"), filepath.Join(dir, "mark")
	require.NoError(t, os.WriteFile(victim, []byte("keep me"), 0o644))
	was := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, os.Chtimes(victim, was, was))
	require.NoError(t, os.Symlink(victim, link))
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, setTimes(link, at))
	fi, err := os.Stat(victim)
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Equal(was), "the link's target was touched: %s", fi.ModTime())
	li, err := os.Lstat(link)
	require.NoError(t, err)
	assert.True(t, li.ModTime().Equal(at), li.ModTime().String())
	assert.Error(t, setTimes(filepath.Join(dir, "missing"), at))
}

// TestAppendOwn: an append to the harness's own file never waits on a
// FIFO in its place and never reaches another file through a symlink:
// either is replaced by a file of its own; a regular one is appended to.
func TestAppendOwn(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep me\n"), 0o644))
	for name, setup := range map[string]func(path string){
		"regular": func(p string) { require.NoError(t, os.WriteFile(p, []byte("old\n"), 0o644)) },
		"fifo":    func(p string) { require.NoError(t, syscall.Mkfifo(p, 0o644)) },
		"symlink": func(p string) { require.NoError(t, os.Symlink(victim, p)) },
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			setup(path)
			require.NoError(t, returns(t, "AppendOwn("+name+")", func() error {
				f, err := AppendOwn(path, 0o644)
				if err == nil {
					_, err = f.WriteString("new\n")
					f.Close()
				}
				return err
			}))
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			want := "new\n"
			if name == "regular" {
				want = "old\nnew\n"
			}
			assert.Equal(t, want, string(data))
		})
	}
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep me\n", string(data))
}

// TestMkdirOwn: each step of the path is made a directory of its own: a
// directory there is kept with what it holds, a symlink (to a directory
// elsewhere) or a file in its place replaced; CreateOwn makes a new file
// only, never through a link.
func TestMkdirOwn(t *testing.T) {
	root := t.TempDir()
	elsewhere := t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(root, "a")))
	dir, err := MkdirOwn(root, "a/b")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "a", "b"), dir)
	fi, err := os.Lstat(filepath.Join(root, "a"))
	require.NoError(t, err)
	assert.True(t, fi.IsDir(), "the symlink was kept")
	entries, _ := os.ReadDir(elsewhere)
	assert.Empty(t, entries, "the link's target was written")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "kept"), []byte("x"), 0o644))
	require.NoError(t, os.RemoveAll(filepath.Join(root, "c")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "c"), []byte("file"), 0o644))
	_, err = MkdirOwn(root, "a/b")
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, "kept"))
	c, err := MkdirOwn(root, "c")
	require.NoError(t, err)
	fi, err = os.Lstat(c)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())

	require.NoError(t, CreateOwn(filepath.Join(dir, "new"), []byte("data"), 0o644))
	assert.Error(t, CreateOwn(filepath.Join(dir, "new"), []byte("again"), 0o644), "an existing file")
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "target"), filepath.Join(dir, "link")))
	assert.Error(t, CreateOwn(filepath.Join(dir, "link"), []byte("through"), 0o644))
	assert.NoFileExists(t, filepath.Join(elsewhere, "target"))
}
