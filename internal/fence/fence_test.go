package fence

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/validation"
)

// project is a state root with a record, its home's settings given.
func testProject(t *testing.T, settings string) string {
	t.Helper()
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	t.Setenv("HARNESS_RECORD_DIR", filepath.Join(home, "records"))
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	require.NoError(t, state.Create(dir, time.Now()))
	if settings != "" {
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o644))
	}
	return dir
}

const sandboxed = `{"sandbox": {"enabled": true, "allowUnsandboxedCommands": false, "failIfUnavailable": true, "filesystem": {"denyWrite": ["~/records"]}}}`

// At the standard level a project command runs as it is; at the sandboxed
// level, from a process that can write the record, it runs confined: the
// record read-only to it, the project writable, and the sandbox's trial
// run noted once.
func TestConfinedOnlyWhereSandboxed(t *testing.T) {
	dir := testProject(t, "")
	f := Open(project.Open(dir))
	assert.Nil(t, f.Runner(dir).Wrap, "standard level: not confined")
	assert.Equal(t, "", f.Close("a test").Files())

	if runtime.GOOS != "linux" {
		t.Skip("bubblewrap is Linux's")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed")
	}
	dir = testProject(t, sandboxed)
	f = Open(project.Open(dir))
	require.NotNil(t, f.Runner(dir).Wrap, "sandboxed level: confined")
	if f.unavailable != nil {
		t.Skipf("bubblewrap cannot set up a sandbox here: %v", f.unavailable)
	}
	assert.FileExists(t, filepath.Join(record.Dir(dir), probedName), "the trial run is noted")
	rec := filepath.Join(record.Dir(dir), "planted")
	r := f.Run(context.Background(), dir, "touch in-project && touch "+rec, 10*time.Second)
	assert.Equal(t, validation.Fail, r.Outcome, r.Tail)
	assert.FileExists(t, filepath.Join(dir, "in-project"))
	assert.NoFileExists(t, rec)
	assert.False(t, f.Close("a test").Tampered())
}

// Where the sandbox cannot be set up, nothing runs: the result says why.
func TestUnavailableRunsNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("bubblewrap is Linux's")
	}
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "bwrap"), []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := testProject(t, sandboxed)
	f := Open(project.Open(dir))
	r := f.Run(context.Background(), dir, "touch ran", 10*time.Second)
	assert.Equal(t, validation.Missing, r.Outcome)
	assert.Contains(t, r.Unconfined, "No permissions to create new namespace")
	assert.NoFileExists(t, filepath.Join(dir, "ran"))
	assert.NoFileExists(t, filepath.Join(record.Dir(dir), probedName), "a failed trial is not noted")
}
