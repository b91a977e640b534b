package root

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mkroot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, TasksFile), []byte(`{"tasks":[]}`), 0o644))
	return dir
}

func TestFind(t *testing.T) {
	a, b := mkroot(t), mkroot(t)
	deep := filepath.Join(a, "x", "y", "z")
	require.NoError(t, os.MkdirAll(deep, 0o755))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(deep, link))
	nowhere, _ := filepath.EvalSymlinks(t.TempDir())

	tests := []struct {
		name                  string
		stateRoot, projectDir string
		cwd, want             string
	}{
		{"cwd itself", "", "", a, a},
		{"cwd parents", "", "", deep, a},
		{"symlinked cwd resolved", "", "", link, a},
		{"project dir wins over cwd", "", b, deep, b},
		{"project dir parents", "", deep, b, a},
		{"project dir without state falls back to cwd", "", nowhere, deep, a},
		{"HARNESS_STATE_ROOT wins", b, a, a, b},
		{"HARNESS_STATE_ROOT without a tasks file is ignored", nowhere, "", deep, a},
		{"nothing anywhere", "", "", nowhere, ""},
		{"missing cwd", "", "", filepath.Join(nowhere, "gone"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HARNESS_STATE_ROOT", tt.stateRoot)
			t.Setenv("CLAUDE_PROJECT_DIR", tt.projectDir)
			assert.Equal(t, tt.want, Find(tt.cwd))
		})
	}
}

func TestActive(t *testing.T) {
	dir := mkroot(t)
	assert.False(t, Active(dir))
	assert.False(t, Active(""))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ActiveMarker), nil, 0o644))
	assert.True(t, Active(dir))
}

func TestIsHarnessFile(t *testing.T) {
	for name, want := range map[string]bool{
		"harness-tasks.json": true, "harness-tasks.json.bak": true, "harness-progress.txt": true,
		".harness-active": true, ".harness-runtime/x": true, "a/.harness-runtime/x": false, "harness-init.sh": true,
		"harness-tasks.json.corrupt-20250101T000000Z": true, "./harness-tasks.json": true,
		"sub/harness-tasks.json": false, "main.go": false, "harness-tasks.jsonx": false,
	} {
		assert.Equal(t, want, IsHarnessFile(name), name)
	}
}

func TestActiveDanglingSymlink(t *testing.T) {
	dir := mkroot(t)
	assert.False(t, Active(dir))
	require.NoError(t, os.Symlink("/nonexistent", filepath.Join(dir, ActiveMarker)))
	assert.True(t, Active(dir), "a dangling symlink in the marker's place still counts")
}

// OwnRuntimeDir removes a symlink (or a file) in the runtime directory's
// place, leaving the link's target alone, and keeps a directory there with
// what it holds.
func TestOwnRuntimeDir(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "theirs"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, RuntimeDir)))
	OwnRuntimeDir(dir)
	_, err := os.Lstat(filepath.Join(dir, RuntimeDir))
	assert.True(t, os.IsNotExist(err), "the link is still there")
	assert.FileExists(t, filepath.Join(elsewhere, "theirs"))

	require.NoError(t, os.MkdirAll(filepath.Join(dir, RuntimeDir), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, RuntimeDir, "summary.json"), []byte("{}"), 0o644))
	OwnRuntimeDir(dir)
	assert.FileExists(t, filepath.Join(dir, RuntimeDir, "summary.json"))
}

// Nearest climbs from dir to its parents, maxParents of them at most, and
// takes the first one has accepts.
func TestNearest(t *testing.T) {
	deep := "/"
	for i := range maxParents + 5 {
		deep = filepath.Join(deep, fmt.Sprintf("d%d", i))
	}
	at := func(want string) func(string) bool { return func(d string) bool { return d == want } }
	tests := []struct {
		name, dir string
		has       func(string) bool
		want      string
	}{
		{"itself", "/a/b", at("/a/b"), "/a/b"},
		{"a parent", "/a/b/c", at("/a"), "/a"},
		{"the root", "/a/b", at("/"), "/"},
		{"none", "/a/b", at("/x"), ""},
		{"no dir", "", at(""), ""},
		{"past the bound", deep, at("/"), ""},
		{"within the bound", deep, at(filepath.Dir(deep)), filepath.Dir(deep)},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Nearest(tt.dir, tt.has), tt.name)
	}
}
