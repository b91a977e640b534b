// Package gittest makes git repositories for tests: a fresh repository with
// files and one commit, under a HOME and identity of the test's own.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Repo makes a repository in a new directory, writes files into it and
// commits them (an empty commit when there are none) as "base". It sets the
// test's HOME, GIT_CONFIG_NOSYSTEM and identity.
func Repo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", t.TempDir())
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
	Sh(t, dir, "git init -q")
	Write(t, dir, files)
	Sh(t, dir, "git add -A && git commit -q --allow-empty -m base")
	return dir
}

// Write writes files (path relative to dir: content) into dir.
func Write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
}

// Sh runs script with sh in dir and returns its trimmed output; a failure
// fails the test.
func Sh(t *testing.T, dir, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", script, out)
	return strings.TrimSpace(string(out))
}
