package sessionhook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// TestSessionStartFastPathSaysTheSame: a session start that counts the
// session without parsing the tasks (the cache holds the file's summary,
// nothing to recover or validate) gives the model the same context, and
// leaves the same file, as the full path.
func TestSessionStartFastPathSaysTheSame(t *testing.T) {
	tasks := tasksJSON(4, "",
		task("task-001", "completed"),
		`{"id": "task-002", "title": "Second", "status": "failed", "priority": "P1", "depends_on": [], "attempts": 1, "max_attempts": 3, "validation": {"command": "true"}, "error_log": ["[TEST_FAIL] exit 1"], "checkpoints": []}`)
	run := func(fast bool) (context string, file []byte) {
		dir := project(t, tasks)
		if fast {
			_, err := statecache.Load(dir) // builds the cache
			require.NoError(t, err)
			require.NotNil(t, statecache.Cached(dir))
		}
		before := fastStarts
		d := SessionStart(payload(t, "SessionStart", "source", "startup"))
		require.Equal(t, fast, fastStarts == before+1, "took the fast path")
		if fast {
			require.NotNil(t, statecache.Cached(dir), "the fast path keeps the cache current")
		}
		file, err := os.ReadFile(filepath.Join(dir, state.FileName))
		require.NoError(t, err)
		return strings.ReplaceAll(d.Context, dir, "ROOT"), file
	}
	slowCtx, slowFile := run(false)
	fastCtx, fastFile := run(true)
	assert.Equal(t, slowCtx, fastCtx)
	assert.Equal(t, string(slowFile), string(fastFile))
	assert.Contains(t, fastCtx, "HARNESS SESSION-5 ")
	assert.Contains(t, fastCtx, "(attempt 2 of 3; last error: [TEST_FAIL] exit 1)")
}
