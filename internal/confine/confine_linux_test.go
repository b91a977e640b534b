package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestForTreeFindsTheWorkTreeAndItsProtectedPaths(t *testing.T) {
	top := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(top, ".git"), 0o755))
	sub := filepath.Join(top, "pkg", "x")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	p := Policy{Write: []string{"/tmp"}, Deny: []string{"/records"}}.ForTree(sub)
	assert.Equal(t, []string{"/tmp", top}, p.Write)
	assert.Contains(t, p.Deny, "/records")
	assert.Contains(t, p.Deny, filepath.Join(top, ".claude"))
	assert.Contains(t, p.Deny, filepath.Join(top, ".git", "hooks"))
	// Without a repository, the directory itself.
	plain := t.TempDir()
	assert.Equal(t, []string{plain}, Policy{}.ForTree(plain).Write)
}

func TestExistingKeepsRealAbsolutePathsOnce(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(dir, link))
	real, _ := filepath.EvalSymlinks(dir)
	assert.Equal(t, []string{real}, existing([]string{dir, link, "relative", "", filepath.Join(dir, "missing")}))
}

// The sandbox itself, run for real: the project writable, a denied path
// inside it and everything outside read-only, no network.
func TestWrapConfinesForReal(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("bubblewrap is Linux's")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed")
	}
	project, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(project, "records"), 0o755))
	p := Policy{Write: []string{project}, Deny: []string{filepath.Join(project, "records")}}
	run := func(script string) error {
		argv, err := p.Wrap([]string{"sh", "-c", script})
		require.NoError(t, err)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = project
		return cmd.Run()
	}
	if err := run("true"); err != nil {
		t.Skipf("bubblewrap cannot set up a sandbox here: %v", err)
	}
	assert.NoError(t, run("echo ok > "+filepath.Join(project, "in.txt")))
	assert.FileExists(t, filepath.Join(project, "in.txt"))
	assert.Error(t, run("echo no > "+filepath.Join(project, "records", "x")))
	assert.NoFileExists(t, filepath.Join(project, "records", "x"))
	assert.Error(t, run("echo no > "+filepath.Join(outside, "x")), "outside the writable paths (here under /tmp, which this policy does not grant)")
	assert.NoFileExists(t, filepath.Join(outside, "x"))
	assert.NoError(t, run(`test "$(grep -c : /proc/net/dev)" = 1`), "no network: the loopback interface alone")
}

func TestBwrapArgsOrder(t *testing.T) {
	dir := t.TempDir()
	deny := filepath.Join(dir, "d")
	require.NoError(t, os.Mkdir(deny, 0o755))
	real, _ := filepath.EvalSymlinks(dir)
	args := Policy{Write: []string{dir}, Deny: []string{deny, "/nonexistent"}}.bwrapArgs("bwrap", []string{"sh", "-c", "x"})
	assert.Equal(t, []string{"bwrap", "--die-with-parent", "--unshare-pid", "--unshare-ipc",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net",
		"--bind", real, real, "--ro-bind", filepath.Join(real, "d"), filepath.Join(real, "d"),
		"--", "sh", "-c", "x"}, args)
	withNet := Policy{Network: true}.bwrapArgs("bwrap", []string{"true"})
	assert.NotContains(t, withNet, "--unshare-net")
}
