//go:build unix

package git

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A process git starts and leaves running holds git's output open after
// git exits: the call returns what git printed once PipeDelay passed, not
// when that process ends; a failing git is still a failure.
func TestRunDoesNotWaitForWhatGitLeftBehind(t *testing.T) {
	dir := repo(t, nil)
	pids := filepath.Join(t.TempDir(), "pids")
	t.Cleanup(func() {
		data, _ := os.ReadFile(pids)
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	leave := "alias.leave=!sleep 60 & echo $! >>" + pids + "; echo printed"
	start := time.Now()
	out, err := Run(dir, "-c", leave, "leave")
	require.NoError(t, err)
	assert.Equal(t, "printed", out)
	assert.Less(t, time.Since(start), 30*time.Second, "waited for the process git left behind")

	fail := "alias.fail=!sleep 60 & echo $! >>" + pids + "; exit 3"
	_, err = Run(dir, "-c", fail, "fail")
	assert.Error(t, err)
}

// The repository's file system monitor, a program its configuration names,
// is not run for the harness's git calls.
func TestRunWithoutTheFileSystemMonitor(t *testing.T) {
	dir := repo(t, nil)
	ran := filepath.Join(t.TempDir(), "ran")
	monitor := filepath.Join(t.TempDir(), "fsmonitor")
	require.NoError(t, os.WriteFile(monitor, []byte("#!/bin/sh\ntouch "+ran+"\n"), 0o755))
	sh(t, dir, "git config core.fsmonitor "+monitor)
	_, err := Changes(dir, dir)
	require.NoError(t, err)
	assert.NoFileExists(t, ran)
	sh(t, dir, "git status >/dev/null")
	assert.FileExists(t, ran, "git itself runs it: the test's monitor works")
}
