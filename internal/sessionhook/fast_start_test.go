package sessionhook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/progress"
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

// TestSessionEndSetsLastSessionInPlace: a session that worked ends with
// last_session set and a STATS line, the cache following the file, whether
// the cache knew the file (an in-place edit) or not (the full path).
func TestSessionEndSetsLastSessionInPlace(t *testing.T) {
	for _, warm := range []bool{true, false} {
		dir := project(t, tasksJSON(2, "", task("task-001", "pending")))
		SessionStart(payload(t, "SessionStart", "source", "startup"))
		if !warm {
			require.NoError(t, os.Remove(statecache.Path(dir)))
		}
		// The session did something the log tells.
		require.NoError(t, progress.Append(dir, progress.Entry{Session: 3, Type: progress.Checkpoint, TaskID: "task-001", Message: "step=1/2 \"x\""}))
		SessionEnd(payload(t, "SessionEnd", "reason", "other"))
		s, err := state.Load(dir)
		require.NoError(t, err)
		assert.NotEmpty(t, s.LastSession, "warm=%v", warm)
		assert.NotNil(t, statecache.Cached(dir), "warm=%v: the cache follows the file", warm)
		log, err := os.ReadFile(filepath.Join(dir, "harness-progress.txt"))
		require.NoError(t, err)
		assert.Contains(t, string(log), "STATS tasks_total=1 completed=0 failed=0 pending=1")
	}
}

// TestSessionStartCompactReadsTheSummary: after a compaction the session
// goes on, so SessionStart tells the model where the job stands from the
// hooks' summary of the tasks file, without reading the file: the context
// is the one a full read gives, and a change to the file's bytes that
// keeps its identity (size, time, inode) is not seen, which only a start
// that did not parse it can miss.
func TestSessionStartCompactReadsTheSummary(t *testing.T) {
	tasks := tasksJSON(4, "",
		task("task-001", "completed"),
		`{"id": "task-002", "title": "Second", "status": "failed", "priority": "P1", "depends_on": [], "attempts": 1, "max_attempts": 3, "validation": {"command": "true"}, "error_log": ["[TEST_FAIL] exit 1"], "checkpoints": []}`)
	run := func(warm bool) string {
		dir := project(t, tasks)
		SessionStart(payload(t, "SessionStart", "source", "startup"))
		if !warm {
			require.NoError(t, os.Remove(statecache.Path(dir)))
		}
		d := SessionStart(payload(t, "SessionStart", "source", "compact"))
		return strings.ReplaceAll(d.Context, dir, "ROOT")
	}
	cold, warm := run(false), run(true)
	assert.Equal(t, cold, warm)
	assert.Contains(t, warm, "HARNESS SESSION-5 (compact")
	assert.Contains(t, warm, "(attempt 2 of 3; last error: [TEST_FAIL] exit 1)")

	// The proof that the warm start did not parse: bytes changed under the
	// same identity go unseen.
	dir := project(t, tasks)
	SessionStart(payload(t, "SessionStart", "source", "startup"))
	path := filepath.Join(dir, state.FileName)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(strings.Replace(string(doc), "exit 1", "exit 7", 1)), 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Chtimes(path, fi.ModTime(), fi.ModTime()))
	d := SessionStart(payload(t, "SessionStart", "source", "compact"))
	assert.Contains(t, d.Context, "last error: [TEST_FAIL] exit 1)", "the summary, not the file")
}
