package shortlived

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// restore puts the test process's collector settings back.
func restore(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}

func TestTuneTurnsTheCollectorOffUnderALimit(t *testing.T) {
	restore(t)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	Tune()
	assert.Equal(t, -1, debug.SetGCPercent(100))
	assert.Equal(t, int64(MemoryLimit), debug.SetMemoryLimit(math.MaxInt64))
}

func TestTuneLeavesAPersonsSettings(t *testing.T) {
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			restore(t)
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			t.Setenv(env, "200")
			Tune()
			assert.Equal(t, 100, debug.SetGCPercent(100))
			assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(math.MaxInt64))
		})
	}
}
