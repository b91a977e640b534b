package validation

import (
	"context"
	"sync"
	"time"
)

// MaxParallel bounds how many commands RunAll runs at once: validation
// commands wait on files, networks and their own children as often as on
// a core.
const MaxParallel = 8

// Job is one command for RunAll.
type Job struct {
	Command string
	Timeout time.Duration
}

// Done is what RunAll made of one Job.
type Done struct {
	Result
	// Late: ctx had ended when this run did, so a failure may be the
	// caller's deadline rather than the command's.
	Late bool
}

// RunAll runs jobs side by side in dir, at most MaxParallel at a time, each
// as Run runs it, and returns what each did, in order. The verification
// gate and a batch of the merge queue both run their checks so.
func RunAll(ctx context.Context, dir string, jobs []Job) []Done {
	return Runner{}.RunAll(ctx, dir, jobs)
}

// RunAll is the package's RunAll with each command run by rn.
func (rn Runner) RunAll(ctx context.Context, dir string, jobs []Job) []Done {
	out := make([]Done, len(jobs))
	slots := make(chan struct{}, MaxParallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			r := rn.Run(ctx, dir, j.Command, j.Timeout)
			out[i] = Done{Result: r, Late: ctx.Err() != nil}
		}()
	}
	wg.Wait()
	return out
}
