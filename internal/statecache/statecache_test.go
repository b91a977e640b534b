package statecache

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/state"
)

func TestCacheFollowsTheFile(t *testing.T) {
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[
	  {"id":"a","title":"A","status":"pending","priority":"P1"},
	  {"id":"b","title":"B","status":"in_progress","claimed_by":"w1","allowed_paths":["src/**"]}]}`), 0o644))

	s, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, &Brief{ID: "a", Title: "A"}, s.Next)
	require.Len(t, s.InProgress, 1)
	assert.Equal(t, []string{"src/**"}, s.InProgress[0].AllowedPaths)
	_, err = os.Stat(Path(dir))
	require.NoError(t, err, "the digest is cached")

	// A cached digest is served as is...
	cached, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, s, cached)

	// ...until the state changes through the harness (a rename), whose
	// writer stores the new digest itself.
	_, err = Update(dir, func(st *state.State) error {
		st.Tasks[0].Status = state.Completed
		return nil
	})
	require.NoError(t, err)
	data, err := os.ReadFile(Path(dir))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"completed":1`, "the writer refreshed the cache")
	s, err = Load(dir)
	require.NoError(t, err)
	assert.Nil(t, s.Next)
	assert.Equal(t, 1, s.Stats.Completed)

	// A change behind the harness's back (a new inode, size or time) is
	// noticed too.
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[{"id":"z","title":"Z","status":"pending"}]}`), 0o644))
	s, err = Load(dir)
	require.NoError(t, err)
	assert.Equal(t, &Brief{ID: "z", Title: "Z"}, s.Next)
}

func TestCorruptCacheIsIgnored(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[]}`), 0o644))
	require.NoError(t, os.MkdirAll(dir+"/"+RuntimeDir, 0o755))
	require.NoError(t, os.WriteFile(Path(dir), []byte("garbage"), 0o644))
	s, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, 0, s.Stats.Total)
}

func TestMissingState(t *testing.T) {
	_, err := Load(t.TempDir())
	assert.ErrorIs(t, err, state.ErrNotFound)
}

// TestSummaryFromSkim: the summary made from a skim of a file (and a full
// read of the tasks it holds whole) is the summary of the parsed file, on
// a state with every kind of task: done, next, retryable, blocked by a
// dependency that failed for good, claimed with a scope and a check.
func TestSummaryFromSkim(t *testing.T) {
	raw := []byte(`{
  "version": 2,
  "session_config": {"concurrency_mode": "concurrent", "allowed_commands": ["go test"], "max_sessions": 9},
  "tasks": [
    {"id": "t1", "title": "Done", "status": "completed", "priority": "P0", "depends_on": [], "attempts": 1, "checkpoints": [{"step": 1, "total": 1, "description": "d", "timestamp": "t"}]},
    {"id": "t2", "title": "Claimed", "status": "in_progress", "priority": "P1", "depends_on": ["t1"], "claimed_by": "w1", "lease_expires_at": "2099-01-01T00:00:00Z",
     "allowed_paths": ["src/**"], "worktree": "/tmp/w1", "validation": {"command": "go test ./src", "timeout_seconds": 30}},
    {"id": "t3", "title": "Next", "status": "pending", "priority": "P1", "depends_on": ["t1"], "validation": {"command": "make check"}, "on_failure": {"cleanup": "git stash"}},
    {"id": "t4", "title": "Retry", "status": "failed", "priority": "P2", "attempts": 1, "error_log": ["[TEST_FAIL] exit 1"], "failed_at": "2026-01-01T00:00:00Z"},
    {"id": "t5", "title": "Dead", "status": "failed", "attempts": 3, "max_attempts": 3, "error_log": ["[TEST_FAIL] x"]},
    {"id": "t6", "title": "Blocked", "status": "pending", "depends_on": ["t5"]}
  ],
  "session_count": 4,
  "last_session": null
}`)
	parsed, err := state.Parse(raw, state.FileName)
	require.NoError(t, err)
	want := Of(parsed)
	got, err := fromSkim(raw)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	require.NotNil(t, got.NextTask)
	assert.Equal(t, "make check", got.NextTask.Command, "the next task is read whole")
	require.Len(t, got.InProgress, 1)
	assert.Equal(t, "go test ./src", got.InProgress[0].Command, "a claim is read whole")
	assert.False(t, got.DepsClean, "t6 is blocked by t5, which failed for good")
}

// TestCacheSurvivesTheRuntimeDirectory: the summary's copy in the record
// serves when .harness-runtime was removed (no skim, no parse), and puts
// the runtime copy back.
func TestCacheSurvivesTheRuntimeDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[{"id":"a","title":"A","status":"pending"}]}`), 0o644))
	_, err := Update(dir, func(st *state.State) error { st.SessionCount = 1; return nil })
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(dir+"/"+RuntimeDir))
	require.FileExists(t, recordPath(dir))

	// The record's copy is the summary: a change to the file's bytes that
	// keeps its identity goes unseen, as with the runtime copy.
	data, err := os.ReadFile(recordPath(dir))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(recordPath(dir), []byte(strings.Replace(string(data), `"title":"A"`, `"title":"from the record"`, 1)), 0o600))
	before := skims
	s, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, before, skims, "not skimmed")
	assert.Equal(t, "from the record", s.Next.Title)
	assert.FileExists(t, Path(dir), "the runtime copy is back")
}

// TestLoadSkimsWhatTheHarnessWrote: with no cache (a record without the
// summary's copy, as older versions left it), a tasks file the record
// says the harness wrote is skimmed, not parsed; one changed by another
// hand since is parsed whole (and, when it does not read, the last state
// the harness wrote is answered instead).
func TestLoadSkimsWhatTheHarnessWrote(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[{"id":"a","title":"A","status":"pending"}]}`), 0o644))
	_, err := Update(dir, func(st *state.State) error { st.SessionCount = 1; return nil })
	require.NoError(t, err)
	noCache := func() {
		require.NoError(t, os.Remove(Path(dir)))
		require.NoError(t, os.Remove(recordPath(dir)))
	}
	noCache()

	before := skims
	s, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, before+1, skims, "skimmed")
	assert.Equal(t, &Brief{ID: "a", Title: "A"}, s.Next)
	assert.NotNil(t, Cached(dir), "and cached")

	// Another writer: a schema error only a full read sees.
	noCache()
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[{"id":"a","title":"A","status":"pending","attempts":"two"}]}`), 0o644))
	before = skims
	s, err = Load(dir)
	require.NoError(t, err)
	assert.True(t, s.FromBackup, "the backup answers")
	assert.Equal(t, before, skims, "parsed whole")
}

// FuzzSummaryFromSkim holds the skimmed summary to Of(Parse) on every text
// Parse accepts: the next task and the claims read whole, the counts, the
// dependency check. `go test -fuzz=FuzzSummaryFromSkim ./internal/statecache`
// explores.
func FuzzSummaryFromSkim(f *testing.F) {
	for _, seed := range []string{
		`{"tasks": [{"id": "a", "title": "A", "status": "pending", "validation": {"command": "make"}}], "session_count": 1}`,
		`{"session_config": {"concurrency_mode": "concurrent"}, "tasks": [{"id": "a", "status": "in_progress", "claimed_by": "w", "allowed_paths": ["x/**"], "validation": {"command": "go test"}, "worktree": "/w"}, {"id": "b", "status": "pending", "depends_on": ["a"]}]}`,
		`{"tasks": [{"id": "a", "status": "failed", "attempts": 3, "max_attempts": 3}, {"id": "b", "status": "pending", "depends_on": ["a"]}, {"id": "c", "status": "pending", "depends_on": ["d"]}, {"id": "d", "status": "pending", "depends_on": ["c"]}]}`,
		`{"tasks": [{"id": "x", "status": "completed", "checkpoints": [{"step": 1, "total": 1, "description": "d", "timestamp": "t"}]}, {"id": "y", "status": "failed", "attempts": 1, "error_log": ["[TEST_FAIL] e"], "failed_at": "2026-01-01T00:00:00Z", "priority": "P0"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		parsed, err := state.Parse(raw, state.FileName)
		if err != nil {
			return
		}
		got, err := fromSkim(append([]byte(nil), raw...))
		if err != nil {
			t.Fatalf("fromSkim refused what Parse reads: %v\n%q", err, raw)
		}
		assert.Equal(t, Of(parsed), got, "%q", raw)
	})
}

// TestSameTextUnderANewStat: a tasks file whose stat moved but whose bytes
// are the ones the harness last wrote (a touch, a checkout of the same
// text) is counted in place from the summary made for those bytes, with no
// skim and no parse; the record's mark and the summary follow its new
// stat. Bytes of the same length changed by another hand are not.
func TestSameTextUnderANewStat(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[{"id":"a","title":"A","status":"pending"}]}`), 0o644))
	_, err := Update(dir, func(st *state.State) error { st.SessionCount = 1; return nil })
	require.NoError(t, err)
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(state.Path(dir), later, later))
	require.Nil(t, Cached(dir), "the summary's key is the old stat")

	before := skims
	sum, ok, err := CountSession(dir, func(*Summary) bool { return true })
	require.NoError(t, err)
	require.True(t, ok, "counted in place")
	assert.Equal(t, 2, sum.SessionCount)
	assert.Equal(t, before, skims, "not skimmed")
	assert.Equal(t, sum, Cached(dir), "the summary follows the file")
	m, ok := record.Of(dir).Mark()
	require.True(t, ok)
	fi, err := os.Stat(state.Path(dir))
	require.NoError(t, err)
	assert.Equal(t, fi.ModTime().UnixNano(), m.ModNs, "the mark follows the file")

	// Another hand's text, of the same length, under a new stat: not the
	// harness's bytes, so the in-place count refuses it (the caller reads
	// the file whole and checks it).
	raw, err := os.ReadFile(state.Path(dir))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(strings.Replace(string(raw), `"A"`, `"B"`, 1)), 0o644))
	require.NoError(t, os.Chtimes(state.Path(dir), later.Add(time.Hour), later.Add(time.Hour)))
	_, ok, err = CountSession(dir, func(*Summary) bool { return true })
	require.NoError(t, err)
	assert.False(t, ok, "left to the full read")
}

// TestRetouchedKeysTheSummaryOfTheMark: the integrity check's repair of a
// touched tasks file (same bytes) keys the summary to the file, so the
// hooks that follow read it from the cache.
func TestRetouchedKeysTheSummaryOfTheMark(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[{"id":"a","title":"A","status":"pending"}]}`), 0o644))
	_, err := Update(dir, func(st *state.State) error { st.SessionCount = 1; return nil })
	require.NoError(t, err)
	m, ok := record.Of(dir).Mark()
	require.True(t, ok)
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(state.Path(dir), later, later))
	fi, err := os.Stat(state.Path(dir))
	require.NoError(t, err)

	s := Retouched(dir, m, fi)
	require.NotNil(t, s)
	assert.Equal(t, s, Cached(dir))
	// A mark the summary was not made for gives none (the mark is still
	// followed).
	m.ModNs++
	assert.Nil(t, Retouched(dir, m, fi))
}
