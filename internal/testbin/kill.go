package testbin

import (
	"errors"
	"math/rand/v2"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// Killer runs a command again and again and kills each run with SIGKILL at
// a random point of it, for the tests that show a crash at any instant
// loses nothing. The window of the kill follows the machine's pace: it
// shrinks when a run finished before its kill and grows when one was
// killed, so that about half of the runs are killed, at points spread over
// their whole run.
type Killer struct {
	// Span is the window: each run is killed after a random wait in
	// [0, Span].
	Span time.Duration
}

// NewKiller times five whole runs of the command run makes (each must
// succeed) and starts the window at their median.
func NewKiller(t testing.TB, run func(i int) *exec.Cmd) *Killer {
	t.Helper()
	var took []time.Duration
	for i := range 5 {
		start := time.Now()
		if out, err := run(i).CombinedOutput(); err != nil {
			t.Fatalf("a whole run failed: %v: %s", err, out)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	return &Killer{Span: took[len(took)/2]}
}

// Run starts cmd and kills it after a random wait within the window. It
// reports whether the kill met the process (killed) or the process had
// finished on its own first; err is the process's own failure.
func (k *Killer) Run(cmd *exec.Cmd) (killed bool, err error) {
	if err := cmd.Start(); err != nil {
		return false, err
	}
	time.Sleep(time.Duration(rand.Int64N(int64(k.Span) + 1)))
	cmd.Process.Signal(syscall.SIGKILL) // fails harmlessly when it has exited
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		k.Span -= k.Span / 8
		return false, nil
	case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
		k.Span += k.Span/8 + time.Millisecond
		return true, nil
	}
	return false, err
}
