package guard

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// result is the outcome of running a validation command for the gate.
type result struct {
	pass    bool
	outcome string // "fails (exit 1)", "timed out after 5s", …
	tail    string
}

// runValidation runs command through sh -c in dir with a timeout. It is a
// variable so tests can count calls.
var runValidation = func(dir, command string, timeout time.Duration) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	tail := lastLines(out.String(), 20)
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return result{outcome: "timed out after " + timeout.String(), tail: tail}
	case err != nil:
		return result{outcome: "fails (" + err.Error() + ")", tail: tail}
	}
	return result{pass: true, outcome: "passes", tail: tail}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
