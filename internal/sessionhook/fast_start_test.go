package sessionhook

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// How a session start finds the tasks file: written by another hand (it
// parses the file whole), summarized in the hooks' cache, or written by
// the harness as the record says, with no cache (it skims the file).
const (
	byHand   = "by hand"
	cached   = "cached"
	recorded = "recorded, no cache"
	tidied   = "cached, .harness-runtime removed"
)

// prepare puts dir's tasks file in the given case.
func prepare(t *testing.T, dir, how string) {
	t.Helper()
	switch how {
	case cached:
		_, err := statecache.Load(dir) // builds the cache
		require.NoError(t, err)
		require.NotNil(t, statecache.Cached(dir))
	case recorded, tidied:
		doc, err := os.ReadFile(filepath.Join(dir, state.FileName))
		require.NoError(t, err)
		// As a save of the harness leaves it: the backup a copy of the file.
		require.NoError(t, os.WriteFile(state.BackupPath(dir), doc, 0o644))
		require.NoError(t, record.Of(dir).SaveTasks(doc, true))
		if how == recorded {
			require.Nil(t, statecache.Cached(dir))
			break
		}
		_, err = statecache.Load(dir) // the cache, and its copy in the record
		require.NoError(t, err)
		require.NoError(t, os.RemoveAll(filepath.Join(dir, statecache.RuntimeDir)))
		require.FileExists(t, filepath.Join(record.Dir(dir), "summary.json"))
	}
}

// TestSessionStartFastPathSaysTheSame: a session start that counts the
// session without parsing the tasks (the cache holds the file's summary,
// or the record vouches for the file and a skim makes the summary;
// nothing to recover or validate) gives the model the same context, and
// leaves the same file, as the full path.
func TestSessionStartFastPathSaysTheSame(t *testing.T) {
	tasks := tasksJSON(4, "",
		task("task-001", "completed"),
		`{"id": "task-002", "title": "Second", "status": "failed", "priority": "P1", "depends_on": [], "attempts": 1, "max_attempts": 3, "validation": {"command": "true"}, "error_log": ["[TEST_FAIL] exit 1"], "checkpoints": []}`)
	run := func(how string) (context string, file []byte) {
		dir := testProject(t, tasks)
		prepare(t, dir, how)
		before := fastStarts
		d := SessionStart(payload(t, "SessionStart", "source", "startup"))
		require.Equal(t, how != byHand, fastStarts == before+1, "%s: took the fast path", how)
		require.NotNil(t, statecache.Cached(dir), "%s: the cache follows the file", how)
		file, err := os.ReadFile(filepath.Join(dir, state.FileName))
		require.NoError(t, err)
		return sameTimes(strings.ReplaceAll(d.Context, dir, "ROOT")), file
	}
	slowCtx, slowFile := run(byHand)
	for _, how := range []string{cached, recorded, tidied} {
		fastCtx, fastFile := run(how)
		assert.Equal(t, slowCtx, fastCtx, how)
		assert.Equal(t, string(slowFile), string(fastFile), how)
		assert.Contains(t, fastCtx, "HARNESS SESSION-5 ")
		assert.Contains(t, fastCtx, "(attempt 2 of 3; last error: [TEST_FAIL] exit 1)")
	}
}

// forgetSummary removes both copies of the hooks' cached summary (the
// runtime directory's and the record's), as a record older than the copy
// has it: the next read of the state makes it again.
func forgetSummary(t *testing.T, dir string) {
	t.Helper()
	for _, path := range summaryCopies(dir) {
		require.NoError(t, os.Remove(path))
	}
}

// summaryCopies are the hooks' summary of the tasks file of dir: in the
// runtime directory and in the record.
func summaryCopies(dir string) []string {
	return []string{statecache.Path(dir), filepath.Join(record.Dir(dir), "summary.json")}
}

// sameTimes makes the log's timestamps in a context one, so two runs that
// straddle a second compare equal.
func sameTimes(context string) string {
	return regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`).ReplaceAllString(context, "TIME")
}

// TestSessionEndSetsLastSessionInPlace: a session that worked ends with
// last_session set and a STATS line, the cache following the file, whether
// the cache knew the file (an in-place edit) or not (the full path).
func TestSessionEndSetsLastSessionInPlace(t *testing.T) {
	for _, warm := range []bool{true, false} {
		dir := testProject(t, tasksJSON(2, "", task("task-001", "pending")))
		SessionStart(payload(t, "SessionStart", "source", "startup"))
		if !warm {
			forgetSummary(t, dir)
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
		dir := testProject(t, tasks)
		SessionStart(payload(t, "SessionStart", "source", "startup"))
		if !warm {
			forgetSummary(t, dir)
		}
		d := SessionStart(payload(t, "SessionStart", "source", "compact"))
		return sameTimes(strings.ReplaceAll(d.Context, dir, "ROOT"))
	}
	cold, warm := run(false), run(true)
	assert.Equal(t, cold, warm)
	assert.Contains(t, warm, "HARNESS SESSION-5 (compact")
	assert.Contains(t, warm, "(attempt 2 of 3; last error: [TEST_FAIL] exit 1)")

	// The proof that the warm start did not parse: the summary's text,
	// changed under the file's key, is what the context says.
	dir := testProject(t, tasks)
	SessionStart(payload(t, "SessionStart", "source", "startup"))
	for _, path := range summaryCopies(dir) {
		doc, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Contains(t, string(doc), "exit 1")
		require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(doc), "exit 1", "exit 7", 1)), 0o644))
	}
	d := SessionStart(payload(t, "SessionStart", "source", "compact"))
	assert.Contains(t, d.Context, "last error: [TEST_FAIL] exit 7)", "the summary, not the file")
}

// TestSessionStartFastPathRecovers: with the cache warm and a task left in
// progress by a dead session, the session is counted in place and only the
// tasks in progress are read for recovery; what the model is told, and the
// task's fate, are the full path's. Both recovery outcomes: acted on (no
// progress: marked failed, the state written) and left for `harness
// recover` (uncommitted changes).
func TestSessionStartFastPathRecovers(t *testing.T) {
	for _, dirty := range []bool{false, true} {
		run := func(how string) (context, status string) {
			dir := testProject(t, "")
			for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.email", "t@t"}, {"config", "user.name", "t"},
				{"config", "commit.gpgsign", "false"}, {"commit", "-q", "--allow-empty", "-m", "baseline"}} {
				out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
				require.NoError(t, err, "%s", out)
			}
			head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
			require.NoError(t, err)
			tasks := tasksJSON(4, "",
				task("task-001", "completed"),
				`{"id": "task-002", "title": "Second", "status": "in_progress", "priority": "P1", "depends_on": [], "attempts": 0, "max_attempts": 3, "started_at_commit": "`+strings.TrimSpace(string(head))+`", "claimed_by": "session:dead", "lease_expires_at": "2000-01-01T00:00:00Z", "validation": {"command": "true"}, "error_log": [], "checkpoints": []}`,
				task("task-003", "pending"))
			require.NoError(t, os.WriteFile(filepath.Join(dir, state.FileName), []byte(tasks), 0o644))
			if dirty {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "work.txt"), []byte("half done\n"), 0o644))
			}
			prepare(t, dir, how)
			before := fastStarts
			d := SessionStart(payload(t, "SessionStart", "source", "startup"))
			require.Equal(t, how != byHand, fastStarts == before+1, "%s: took the fast path", how)
			s, err := state.Load(dir)
			require.NoError(t, err)
			assert.Equal(t, 5, s.SessionCount)
			ctx := strings.ReplaceAll(d.Context, dir, "ROOT")
			ctx = regexp.MustCompile(`[0-9a-f]{7,40}`).ReplaceAllString(ctx, "SHA")
			ctx = regexp.MustCompile(`\d\d:\d\d:\d\dZ|\(\d+ms\)`).ReplaceAllString(ctx, "T")
			return ctx, s.Task("task-002").Status
		}
		slowCtx, slowStatus := run(byHand)
		for _, how := range []string{cached, recorded, tidied} {
			fastCtx, fastStatus := run(how)
			assert.Equal(t, slowCtx, fastCtx, "dirty=%v, %s", dirty, how)
			assert.Equal(t, slowStatus, fastStatus, "dirty=%v, %s", dirty, how)
			if dirty {
				assert.Equal(t, state.InProgress, fastStatus)
				assert.Contains(t, fastCtx, "RECOVER FIRST: task-002")
			} else {
				assert.Equal(t, state.Failed, fastStatus)
				assert.Contains(t, fastCtx, "recovery: task-002 marked failed [SESSION_TIMEOUT] No progress detected")
			}
		}
	}
}
