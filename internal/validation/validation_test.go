//go:build !windows

package validation

import (
	"context"
	"fmt"
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

func TestRunOutcomes(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "here.txt"), []byte("x"), 0o644))
	for _, tc := range []struct {
		name, command string
		outcome       Outcome
		exit          int
		first         string
	}{
		{"pass", "test -f here.txt && echo ok", Pass, 0, "ok"},
		{"fail picks the error line", "echo building; echo 'main.go:3: undefined: foo' >&2; echo done; exit 3", Fail, 3, "main.go:3: undefined: foo"},
		{"fail without output", "false", Fail, 1, "exit status 1 (no output)"},
		{"summary with zero errors is not the error", "echo '0 errors'; echo 'FAIL'; echo 'AssertionError: 1 != 2'; exit 1", Fail, 1, "AssertionError: 1 != 2"},
		{"colour codes are removed", "printf '\\033[31merror: red\\033[0m\\n'; exit 1", Fail, 1, "error: red"},
		{"last line when nothing looks like an error", "echo one; echo two; exit 4", Fail, 4, "two"},
		{"missing first program", "no-such-program-xyz --flag", Missing, -1, "no-such-program-xyz: command not found"},
		{"missing later program (exit 127)", "cd . && no-such-program-xyz", Missing, 127, ""},
		{"missing relative script", "./run-tests.sh", Missing, -1, "./run-tests.sh: command not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Run(context.Background(), dir, tc.command, 10*time.Second)
			assert.Equal(t, tc.outcome, r.Outcome, "tail: %s", r.Tail)
			assert.Equal(t, tc.exit, r.ExitCode)
			if tc.first != "" {
				assert.Equal(t, tc.first, r.FirstLine)
			}
			if tc.outcome == Missing {
				assert.NotEmpty(t, r.Program)
			}
		})
	}
}

// A validation that outlives its limit is killed with its whole process
// group: the test runner's children must not survive it.
func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	r := Run(context.Background(), dir, "sleep 30 & echo $! > child.pid; echo started; wait", 300*time.Millisecond)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, Timeout, r.Outcome)
	assert.Equal(t, "killed after the 300ms time limit", r.FirstLine)
	assert.Contains(t, r.Tail, "started")
	assertDead(t, filepath.Join(dir, "child.pid"))
}

// Background jobs left by a command that exits normally are killed too, and
// Run does not wait for them to close the output.
func TestRunKillsLeftovers(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	r := Run(context.Background(), dir, "sleep 30 & echo $! > child.pid; echo ok", 10*time.Second)
	assert.Equal(t, Pass, r.Outcome)
	assert.Less(t, time.Since(start), 2*time.Second)
	assertDead(t, filepath.Join(dir, "child.pid"))
}

func TestRunContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	r := Run(ctx, t.TempDir(), "sleep 30", time.Minute)
	assert.Equal(t, Fail, r.Outcome)
	assert.Contains(t, r.FirstLine, "interrupted")
}

func assertDead(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	deadline := time.Now().Add(2 * time.Second)
	for {
		// A killed child may linger as a zombie until reaped by init;
		// /proc/<pid>/stat then says state Z.
		err := syscall.Kill(pid, 0)
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d still running after the validation ended", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOutputIsBounded(t *testing.T) {
	r := Run(context.Background(), t.TempDir(),
		"echo 'error: the first problem'; i=0; while [ $i -lt 5000 ]; do echo line $i; i=$((i+1)); done; exit 1", 10*time.Second)
	assert.Equal(t, Fail, r.Outcome)
	assert.LessOrEqual(t, len(r.Tail), TailBytes)
	assert.True(t, strings.HasPrefix(r.Tail, "line "), "tail starts at a line: %q", r.Tail[:20])
	assert.True(t, strings.HasSuffix(r.Tail, "line 4999\n"))
	assert.Equal(t, "error: the first problem", r.FirstLine)
}

func TestProgram(t *testing.T) {
	for cmd, want := range map[string]string{
		"npm test -- --testPathPattern=auth": "npm",
		"  go test ./...":                    "go",
		"CI=1 GOFLAGS=-mod=mod go test":      "go",
		"./scripts/test.sh && echo ok":       "./scripts/test.sh",
		"pytest -q; echo":                    "pytest",
		"cd web && npm test":                 "",
		"$HOME/bin/check":                    "",
		"(cd x && make)":                     "",
		"\"quoted prog\" arg":                "",
		"if true; then x; fi":                "",
		"":                                   "",
	} {
		assert.Equal(t, want, Program(cmd), "Program(%q)", cmd)
	}
}

func TestFirstUsefulLineClips(t *testing.T) {
	long := "error: " + strings.Repeat("é", 300)
	got := FirstUsefulLine(long)
	assert.LessOrEqual(t, len(got), maxLine+len("…"))
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.True(t, strings.HasPrefix(got, "error: é"))
}

func TestEnvSeconds(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"": 7 * time.Second, "3": 3 * time.Second, " 3 ": 3 * time.Second, "500ms": 500 * time.Millisecond,
		"0": 7 * time.Second, "-2": 7 * time.Second, "soon": 7 * time.Second, "-1s": 7 * time.Second,
	} {
		t.Setenv("HARNESS_TEST_LIMIT", v)
		assert.Equal(t, want, EnvSeconds("HARNESS_TEST_LIMIT", 7*time.Second), "%q", v)
	}
}

// TestTailStartsAtALineAfterTrimming: Write trims the ring to exactly
// TailBytes, which may begin mid-line; with nothing written after, the
// tail must still start at a line (this failed about one run in twenty
// of TestOutputIsBounded, by how the pipe cut the output).
func TestTailStartsAtALineAfterTrimming(t *testing.T) {
	var out strings.Builder
	for i := 0; out.Len() <= 2*TailBytes; i++ {
		fmt.Fprintf(&out, "line %d\n", i)
	}
	text := out.String()
	require.NotEqual(t, byte('\n'), text[len(text)-TailBytes-1], "the kept bytes begin mid-line")
	var c capture
	c.Write([]byte(text))
	require.Len(t, c.ring, TailBytes, "trimmed by Write")
	tail := c.tail()
	assert.True(t, strings.HasPrefix(tail, "line "), "%q", tail[:20])
	assert.True(t, strings.HasSuffix(text, tail))
}
