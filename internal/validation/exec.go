package validation

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"time"
)

// Spec is a program the harness runs itself (not a task's shell command):
// its argument vector, where, in what environment, with what on standard
// input, for how long at most.
type Spec struct {
	Dir     string
	Args    []string // Args[0] is the program
	Env     []string // the whole environment; nil: this process's
	Stdin   string
	Timeout time.Duration
}

// Ran is how a Spec's run ended.
type Ran struct {
	Stdout   []byte // at most MaxStdout
	Stderr   string // its end, at most TailBytes
	ExitCode int    // -1 when killed or never started
	TimedOut bool
	Err      error // the program could not start, or it was interrupted
	Took     time.Duration
}

// MaxStdout bounds what Exec keeps of a program's standard output.
const MaxStdout = 4 << 20

// Exec runs s in its own process group, which is killed with everything in
// it at the time limit or when ctx ends, and returns its standard output
// and the end of its standard error apart.
func Exec(ctx context.Context, s Spec) Ran {
	start := time.Now()
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if s.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, s.Timeout)
	}
	defer cancel()
	cmd := exec.CommandContext(runCtx, s.Args[0], s.Args[1:]...)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.Stdin = strings.NewReader(s.Stdin)
	cmd.SysProcAttr = groupAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = WaitDelay
	var out limited
	errOut := &capture{}
	cmd.Stdout, cmd.Stderr = &out, errOut
	err := cmd.Run()
	if cmd.Process != nil {
		killGroup(cmd.Process.Pid) // leftovers
	}
	r := Ran{Stdout: out.Bytes(), Stderr: errOut.tail(), ExitCode: -1, Took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
		r.ExitCode = 0
	case ctx.Err() != nil:
		r.Err = ctx.Err()
	case runCtx.Err() != nil:
		r.TimedOut = true
	case errors.As(err, &exit):
		r.ExitCode = exit.ExitCode()
	default:
		r.Err = err
	}
	return r
}

// limited keeps the first MaxStdout bytes written to it.
type limited struct{ bytes.Buffer }

func (l *limited) Write(p []byte) (int, error) {
	if room := MaxStdout - l.Len(); room > 0 {
		l.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
