package validation

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRunAll(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	jobs := []Job{{"true", time.Minute}, {"false", time.Minute}, {"sleep 30", time.Minute}}
	start := time.Now()
	got := RunAll(ctx, t.TempDir(), jobs)
	assert.Less(t, time.Since(start), 20*time.Second, "the context ends the long one")
	if assert.Len(t, got, 3) {
		assert.Equal(t, Pass, got[0].Outcome)
		assert.False(t, got[0].Late)
		assert.Equal(t, Fail, got[1].Outcome)
		assert.False(t, got[1].Late, "it failed before the context ended")
		assert.NotEqual(t, Pass, got[2].Outcome)
		assert.True(t, got[2].Late, "it ended with the context")
	}
}
