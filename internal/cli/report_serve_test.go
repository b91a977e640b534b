package cli

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportServeFollowsTheState runs `harness report --serve` as a process:
// it prints a loopback address, answers with the page, shows a task added
// after it started, and stops cleanly on an interrupt.
func TestReportServeFollowsTheState(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(harnessBin, args...)
		cmd.Dir, cmd.Env = dir, procEnv(t)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%v: %s", args, out)
	}
	git := exec.Command("git", "init", "-q")
	git.Dir = dir
	require.NoError(t, git.Run())
	run("init")
	run("add", "Parser", "--validate", "true")

	serve := exec.Command(harnessBin, "report", "--serve")
	serve.Dir, serve.Env = dir, procEnv(t)
	stdout, err := serve.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, serve.Start())
	defer serve.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	m := regexp.MustCompile(`^serving the report on (http://127\.0\.0\.1:\d+/) \(Ctrl-C to stop\)\n$`).FindStringSubmatch(line)
	require.NotNil(t, m, line)

	get := func() string {
		t.Helper()
		resp, err := http.Get(m[1])
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(body)
	}
	page := get()
	assert.Contains(t, page, `data-id="task-001"`)
	assert.Contains(t, page, `http-equiv="refresh"`)
	assert.NotContains(t, page, `data-id="task-002"`)

	run("add", "Server", "--validate", "true", "--depends-on", "task-001")
	assert.Contains(t, get(), `data-id="task-002" data-class="waiting"`, "the page follows the state file")

	require.NoError(t, serve.Process.Signal(os.Interrupt))
	done := make(chan error, 1)
	go func() { done <- serve.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "an interrupt stops the server with exit 0")
	case <-time.After(10 * time.Second):
		t.Fatal("report --serve did not stop on an interrupt")
	}
	assert.False(t, strings.Contains(page, "https://"))
}
