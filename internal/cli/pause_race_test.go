package cli

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/state"
)

// A person's pause and its end each write the record and the pause file.
// The check after a tool call, running meanwhile, must never see one
// written without the other: it would remove the pause file as forged, or
// put one back, and tell the agent of a tamper that was not.
func TestPauseWhileTheHooksCheck(t *testing.T) {
	dir := gitProject(t, state.Exclusive, 1)
	t.Setenv("HARNESS_LOCK_DIR", lockDir(t))
	env := procEnv(t)
	stop := make(chan struct{})
	var repairs []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, r := range integrity.Check(project.Open(dir), "a tool call", nil).Repairs {
				repairs = append(repairs, r.File+" "+r.What)
			}
		}
	}()
	for range 15 {
		for _, verb := range []string{"pause", "resume"} {
			code, _, stderr := harness(t, dir, env, verb)
			require.Equal(t, 0, code, stderr)
		}
	}
	close(stop)
	wg.Wait()
	assert.Empty(t, repairs)
}

// The real binary's pause and resume change the record's mark while
// another process of the harness adds to it (tasks to verify): under the
// mark's lock neither change is lost.
func TestPauseBesideOtherMarkWrites(t *testing.T) {
	dir := gitProject(t, state.Exclusive, 1)
	env := procEnv(t)
	stop, added := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		for ; ; n++ {
			select {
			case <-stop:
				added <- n
				return
			default:
			}
			record.Of(dir).AddUnverified(fmt.Sprintf("t%05d", n))
		}
	}()
	for range 10 {
		for _, verb := range []string{"pause", "resume"} {
			code, _, stderr := harness(t, dir, env, verb)
			require.Equal(t, 0, code, stderr)
		}
	}
	close(stop)
	n := <-added
	m, ok := record.Of(dir).Mark()
	require.True(t, ok)
	assert.Len(t, m.Unverified, n, "every task to verify is kept")
	assert.Empty(t, m.Paused, "the last resume is kept")
}
