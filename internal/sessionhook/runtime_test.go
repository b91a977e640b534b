package sessionhook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
)

func TestValveBlock(t *testing.T) {
	tests := []struct {
		name  string
		fps   []string // the fingerprint at each successive block
		limit int
		open  []bool // whether the valve opened at each
	}{
		{"opens after limit blocks without progress", []string{"a", "a", "a", "a", "a", "a"}, 5,
			[]bool{false, false, false, false, false, true}},
		{"progress starts the count again", []string{"a", "a", "a", "b", "b", "b", "b", "b", "b"}, 5,
			[]bool{false, false, false, false, false, false, false, false, true}},
		{"an opened valve starts from zero", []string{"a", "a", "a", "a", "a"}, 1,
			[]bool{false, true, false, true, false}},
		{"limit 2", []string{"x", "x", "x"}, 2, []bool{false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v Valve
			for i, fp := range tt.fps {
				assert.Equal(t, tt.open[i], v.Block(fp, tt.limit), "block %d", i+1)
			}
		})
	}
}

func TestValveLimit(t *testing.T) {
	tests := []struct {
		valve, blockCap string
		want            int
	}{
		{"", "", 5},
		{"3", "", 3},
		{"1", "", 1},
		{"9", "", 5}, // never above 5
		{"0", "", 5}, // nonsense is ignored
		{"-2", "", 5},
		{"two", "", 5},
		{"", "8", 5},
		{"", "6", 4}, // two below Claude Code's cap
		{"", "4", 2},
		{"", "3", 1},
		{"", "2", 1}, // never below 1
		{"", "1", 1},
		{"", "0", 5}, // 0 switches Claude Code's cap off
		{"4", "5", 3},
		{"2", "20", 2},
	}
	for _, tt := range tests {
		t.Run("valve="+tt.valve+"/cap="+tt.blockCap, func(t *testing.T) {
			t.Setenv("HARNESS_STOP_VALVE", tt.valve)
			t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", tt.blockCap)
			assert.Equal(t, tt.want, ValveLimit())
		})
	}
}

func TestReflectLimit(t *testing.T) {
	tests := []struct {
		name                      string
		configured                int
		harness, compat, blockCap string
		want                      int
	}{
		{"config", 3, "", "", "", 3},
		{"config 0 disables", 0, "", "", "", 0},
		{"HARNESS_REFLECT_ITERATIONS wins", 3, "1", "4", "", 1},
		{"REFLECT_MAX_ITERATIONS for compatibility", 3, "", "4", "", 4},
		{"env 0 disables", 3, "0", "", "", 0},
		{"garbage is ignored", 2, "many", "", "", 2},
		{"below Claude Code's default cap", 20, "", "", "", 7},
		{"below a lower cap", 5, "", "", "3", 2},
		{"negative is none", 3, "-1", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HARNESS_REFLECT_ITERATIONS", tt.harness)
			t.Setenv("REFLECT_MAX_ITERATIONS", tt.compat)
			t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", tt.blockCap)
			assert.Equal(t, tt.want, reflectLimit(tt.configured))
		})
	}
}

// A session's runtime lives beside the record, outside the project, under
// a name no session id can turn into another path.
func TestRuntimePathStaysInside(t *testing.T) {
	t.Setenv("HARNESS_RECORD_DIR", "/records")
	dir := "/state"
	sessions := record.Of(dir).SessionsDir()
	require.True(t, strings.HasPrefix(sessions, "/records/"), sessions)
	for _, id := range []string{"", "abc-123", "../../etc/passwd", "a/b", ".hidden", strings.Repeat("x", 300), "ümlaut", "a\x00b", "..", "."} {
		p := RuntimePath(record.Of(dir), id)
		assert.Equal(t, sessions, filepath.Dir(p), "id %q", id)
		assert.True(t, strings.HasPrefix(filepath.Base(p), "session-"), "id %q", id)
	}
	assert.Equal(t, filepath.Join(sessions, "session-abc-123.json"), RuntimePath(record.Of(dir), "abc-123"))
	assert.NotEqual(t, RuntimePath(record.Of(dir), "a/b"), RuntimePath(record.Of(dir), "a_b"))
}

func TestRuntimeRoundTrip(t *testing.T) {
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	dir := t.TempDir()
	assert.Nil(t, ReadRuntime(record.Of(dir), "s1"))
	rt := &Runtime{SessionID: "s1", Session: 4, LogOffset: 123, Stop: Valve{Blocks: 2, Fingerprint: "f"},
		Idle: map[string]*Valve{"bob": {Blocks: 1}}, Finished: true, ReflectLimit: 3, ReflectRounds: 1}
	require.NoError(t, rt.save(record.Of(dir)))
	assert.Equal(t, rt, ReadRuntime(record.Of(dir), "s1"))
	entries, _ := os.ReadDir(record.Of(dir).SessionsDir())
	assert.Len(t, entries, 1, "no temporary file is left behind")

	// A corrupt or hostile runtime file is no runtime at all.
	for _, bad := range []string{"", "{", "[]", `{"session": -1}`, "\x00\xff"} {
		require.NoError(t, os.WriteFile(RuntimePath(record.Of(dir), "s1"), []byte(bad), 0o644))
		assert.Nil(t, ReadRuntime(record.Of(dir), "s1"), "%q", bad)
	}
}

func TestPruneRuntimes(t *testing.T) {
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	dir := t.TempDir()
	for _, id := range []string{"old", "new"} {
		require.NoError(t, (&Runtime{SessionID: id}).save(record.Of(dir)))
	}
	other := filepath.Join(record.Of(dir).SessionsDir(), "summary.json")
	require.NoError(t, os.WriteFile(other, []byte("{}"), 0o644))
	old := time.Now().Add(-8 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(RuntimePath(record.Of(dir), "old"), old, old))
	require.NoError(t, os.Chtimes(other, old, old))
	account := budget.Start(record.Of(dir), "old", 1, "", old)
	require.NoError(t, os.Chtimes(budget.Path(record.Of(dir), "old"), old, old))
	pruneRuntimes(record.Of(dir), time.Now())
	assert.NoFileExists(t, RuntimePath(record.Of(dir), "old"))
	assert.FileExists(t, RuntimePath(record.Of(dir), "new"))
	assert.FileExists(t, other, "only session runtime files are pruned")
	assert.NoFileExists(t, budget.Path(record.Of(dir), "old"), "the account of a session that never ended is ended")
	assert.Equal(t, account.Elapsed(), budget.Total(record.Of(dir), nil).Elapsed)
	assert.Equal(t, 1, budget.Total(record.Of(dir), nil).Sessions, "and still counts")

	// Looked through: not again within pruneEvery, then again.
	require.NoError(t, os.Chtimes(RuntimePath(record.Of(dir), "new"), old, old))
	pruneRuntimes(record.Of(dir), time.Now())
	assert.FileExists(t, RuntimePath(record.Of(dir), "new"), "looked through just now")
	pruneRuntimes(record.Of(dir), time.Now().Add(pruneEvery+time.Minute))
	assert.NoFileExists(t, RuntimePath(record.Of(dir), "new"), "a day later")
}

func TestReadSessionLog(t *testing.T) {
	dir := t.TempDir()
	appendLog(t, dir,
		"[2025-07-01T10:00:00Z] [SESSION-2] Completed [task-001] (commit a)", // before the session began
	)
	rt := &Runtime{Session: 3, LogOffset: logSize(dir)}
	appendLog(t, dir,
		"[2025-07-01T11:00:00Z] [SESSION-3] Starting [task-002] Parser (base=a)",
		"[2025-07-01T11:00:01Z] [SESSION-3] Completed [task-002] (commit b)",
		"[2025-07-01T11:00:02Z] [SESSION-3] ERROR [task-003] [TEST_FAIL] 2 tests failed",
		"[2025-07-01T11:00:03Z] [SESSION-3] ERROR [task-004] [DEPENDENCY] Blocked by failed task-003",
		"[2025-07-01T11:00:04Z] [SESSION-3] ERROR [ENV_SETUP] Environment health check: harness-init.sh FAIL",
		"[2025-07-01T11:00:05Z] [SESSION-3] ERROR [task-002] [TEST_FAIL] regression detected at session end: `true` FAIL",
		"[2025-07-01T11:00:06Z] [SESSION-3] Completed [task-002] (commit c)",
		"[2025-07-01T11:00:07Z] [SESSION-4] Completed [task-009] (commit d)", // another worker's session
		"[2025-07-01T11:00:08Z] [SESSION-3] Completed [task-005]",
		"garbage line",
		"[2025-07-01T11:00:09Z] [SESSION-3] Completed",
		"[2025-07-01T11:00:10Z] [SESSION-3] ERROR [task-006",
	)
	got := readSessionLog(dir, rt, owner{n: 3})
	assert.Equal(t, []string{"task-002", "task-005"}, got.completed)
	assert.Equal(t, 4, got.outcomes) // 3 Completed lines + 1 task ERROR

	// Without an offset (no runtime from the session's start) the recent
	// lines are read, and the runtime then says where they begin.
	mid := &Runtime{Session: 2, LogOffset: -1}
	got = readSessionLog(dir, mid, owner{n: 2})
	assert.Equal(t, []string{"task-001"}, got.completed)
	assert.Equal(t, int64(0), mid.LogOffset, "the whole log is recent")
	assert.Equal(t, logSize(dir), mid.Story.Read)

	// An offset past the end (the log was replaced) reads the last part.
	got = readSessionLog(dir, &Runtime{Session: 3, LogOffset: 1 << 40}, owner{n: 3})
	assert.Equal(t, 4, got.outcomes)
}

// In concurrent mode every worker tags its lines with the global
// session_count: outcomes are told apart by who last claimed the task, never
// by the number.
func TestReadSessionLogConcurrent(t *testing.T) {
	dir := t.TempDir()
	appendLog(t, dir, "[2025-07-01T10:00:00Z] [SESSION-1] Starting [task-007] Old (base=a worker=wb)")
	rt := &Runtime{Session: 2, LogOffset: logSize(dir), Held: []string{"task-007"}}
	appendLog(t, dir,
		"[2025-07-01T11:00:00Z] [SESSION-2] Starting [task-001] Lexer (base=a worker=wa)",
		"[2025-07-01T11:00:01Z] [SESSION-2] Completed [task-001] (commit b)", // wa's, tagged with wb's number
		"[2025-07-01T11:00:02Z] [SESSION-2] Starting [task-002] Parser (base=b worker=wb)",
		"[2025-07-01T11:00:03Z] [SESSION-2] ERROR [task-002] [TEST_FAIL] 2 tests failed",
		"[2025-07-01T11:00:04Z] [SESSION-2] Starting [task-002] Parser (base=b worker=wa)",
		"[2025-07-01T11:00:05Z] [SESSION-2] Completed [task-002] (commit c)", // wa's retry
		"[2025-07-01T11:00:06Z] [SESSION-3] Completed [task-007] (commit d)", // claimed before the session began
		"[2025-07-01T11:00:07Z] [SESSION-3] RECOVERY [task-003] action=\"resumed at checkpoint 1/2, re-claimed by wb\" reason=\"ok\"",
		"[2025-07-01T11:00:08Z] [SESSION-3] Completed [task-003] (commit e)",
		"[2025-07-01T11:00:09Z] [SESSION-3] Starting [task-004] [wip] wb) (base=e worker=wab)", // not wb's
		"[2025-07-01T11:00:10Z] [SESSION-3] Completed [task-004] (commit f)",
		// Claims as the harness command now logs them: the worker is on the LOCK line.
		"[2025-07-01T11:00:11Z] [SESSION-3] Starting [task-005] Five (base=f)",
		"[2025-07-01T11:00:11Z] [SESSION-3] LOCK task-005 claimed (lease_expires_at=2025-07-01T12:00:11Z worker=wb)",
		"[2025-07-01T11:00:12Z] [SESSION-3] Completed [task-005] (commit g)",
		"[2025-07-01T11:00:13Z] [SESSION-3] Starting [task-006] Six (base=g)",
		"[2025-07-01T11:00:13Z] [SESSION-3] LOCK task-006 claimed (lease_expires_at=2025-07-01T12:00:13Z worker=wa)",
		"[2025-07-01T11:00:14Z] [SESSION-3] ERROR [task-006] [TEST_FAIL] boom",
		"[2025-07-01T11:00:15Z] [SESSION-3] LOCK released",
	)
	wb := readSessionLog(dir, rt, owner{n: 2, worker: "wb", held: rt.Held})
	assert.Equal(t, []string{"task-007", "task-003", "task-005"}, wb.completed)
	assert.Equal(t, 4, wb.outcomes) // task-002's ERROR, task-007, task-003, task-005

	wa := readSessionLog(dir, &Runtime{Session: 1, LogOffset: rt.LogOffset}, owner{n: 1, worker: "wa"})
	assert.Equal(t, []string{"task-001", "task-002"}, wa.completed)
	assert.Equal(t, 3, wa.outcomes) // task-001, task-002, task-006's ERROR
}

func TestFields(t *testing.T) {
	tests := []struct{ rest, typ, id, cat, msg string }{
		{"Completed [task-1] (commit a)", "Completed", "task-1", "", "(commit a)"},
		{"ERROR [task-1] [TEST_FAIL] boom", "ERROR", "task-1", "TEST_FAIL", "boom"},
		{"ERROR [CONFIG] no file", "ERROR", "", "CONFIG", "no file"},
		{"STATS tasks_total=1", "STATS", "", "", "tasks_total=1"},
		{"LOCK", "LOCK", "", "", ""},
		{"ERROR [unclosed", "ERROR", "", "", "[unclosed"},
	}
	for _, tt := range tests {
		typ, id, cat, msg := fields(tt.rest)
		assert.Equal(t, []string{tt.typ, tt.id, tt.cat, tt.msg}, []string{typ, id, cat, msg}, tt.rest)
	}
}

func TestLinesFromCapsTheRead(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("x", 1023) + "\n"
	f, err := os.Create(filepath.Join(dir, "harness-progress.txt"))
	require.NoError(t, err)
	for i := 0; i < (maxSessionRead/1024)+100; i++ {
		f.WriteString(line)
	}
	f.Close()
	lines, _, _ := linesAfter(dir, 0)
	assert.LessOrEqual(t, len(lines)*1024, maxSessionRead)
	assert.Equal(t, strings.TrimSuffix(line, "\n"), lines[0], "a line cut in half is dropped")
}

// TestRuntimeSavesACountInPlace: Stop's usual save, one count moved by one,
// is written over the file (the same file, no rename); a change of shape
// replaces the file; either reads back as saved.
func TestRuntimeSavesACountInPlace(t *testing.T) {
	dir := t.TempDir()
	path := RuntimePath(record.Of(dir), "s1")
	rt := &Runtime{SessionID: "s1", Session: 1, LogOffset: 10, Stop: Valve{Blocks: 1, Fingerprint: "completed=1"}}
	require.NoError(t, rt.save(record.Of(dir)))
	first, err := os.Stat(path)
	require.NoError(t, err)

	rt = ReadRuntime(record.Of(dir), "s1")
	require.NotNil(t, rt)
	rt.Stop.Blocks = 2
	require.NoError(t, rt.save(record.Of(dir)))
	inPlace, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, os.SameFile(first, inPlace), "written in place")
	assert.Equal(t, rt, ReadRuntime(record.Of(dir), "s1"))

	rt.Stop.Blocks = 3 // the same Runtime saved again: from the text it wrote
	require.NoError(t, rt.save(record.Of(dir)))
	again, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, os.SameFile(first, again), "written in place")
	assert.Equal(t, 3, ReadRuntime(record.Of(dir), "s1").Stop.Blocks)

	rt.Held = []string{"task-001"} // a new member: the file is replaced
	require.NoError(t, rt.save(record.Of(dir)))
	replaced, err := os.Stat(path)
	require.NoError(t, err)
	assert.False(t, os.SameFile(first, replaced), "replaced")
	assert.Equal(t, rt, ReadRuntime(record.Of(dir), "s1"))

	// A file changed by another writer since it was read is not patched.
	stale := ReadRuntime(record.Of(dir), "s1")
	require.NoError(t, os.WriteFile(path, []byte(`{"session_id": "s1", "session": 7}`+"\n"), 0o644))
	stale.Stop.Blocks = 4
	require.NoError(t, stale.save(record.Of(dir)))
	assert.Equal(t, stale, ReadRuntime(record.Of(dir), "s1"))
}

// TestReadSessionLogIncremental: read line by line as the log grows (the
// runtime saved and read back between reads, as Stop does), the session's
// story sums to what one read of all its lines gives, in both modes; a
// line being written is read once it is whole; and what was read is not
// read again (an earlier line rewritten in place changes nothing).
func TestReadSessionLogIncremental(t *testing.T) {
	lines := []string{
		"[2025-07-01T11:00:00Z] [SESSION-2] Starting [task-001] Lexer (base=a worker=wa)",
		"[2025-07-01T11:00:01Z] [SESSION-2] Completed [task-001] (commit b)",
		"[2025-07-01T11:00:02Z] [SESSION-2] Starting [task-002] Parser (base=b worker=wb)",
		"[2025-07-01T11:00:03Z] [SESSION-2] ERROR [task-002] [TEST_FAIL] 2 tests failed",
		"[2025-07-01T11:00:04Z] [SESSION-2] Starting [task-002] Parser (base=b worker=wa)",
		"[2025-07-01T11:00:05Z] [SESSION-2] Completed [task-002] (commit c)",
		"[2025-07-01T11:00:06Z] [SESSION-3] Completed [task-007] (commit d)",
		"[2025-07-01T11:00:07Z] [SESSION-3] RECOVERY [task-003] action=\"resumed at checkpoint 1/2, re-claimed by wb\" reason=\"ok\"",
		"[2025-07-01T11:00:08Z] [SESSION-3] Completed [task-003] (commit e)",
		"[2025-07-01T11:00:11Z] [SESSION-3] Starting [task-005] Five (base=f)",
		"[2025-07-01T11:00:11Z] [SESSION-3] LOCK task-005 claimed (lease_expires_at=2025-07-01T12:00:11Z worker=wb)",
		"[2025-07-01T11:00:12Z] [SESSION-3] Completed [task-005] (commit g)",
		"[2025-07-01T11:00:13Z] [SESSION-3] Completed [task-005] (commit h)",
		"[2025-07-01T11:00:14Z] [SESSION-3] ERROR [task-006] [TEST_FAIL] boom",
	}
	for _, who := range []owner{{n: 3}, {n: 2, worker: "wb", held: []string{"task-007"}}, {n: 1, worker: "wa"}} {
		t.Run(fmt.Sprintf("%d%s", who.n, who.worker), func(t *testing.T) {
			whole := t.TempDir()
			appendLog(t, whole, lines...)
			want := readSessionLog(whole, &Runtime{Session: who.n}, who)

			dir := t.TempDir()
			rt := &Runtime{Session: who.n}
			var got sessionLog
			for _, l := range lines {
				f, err := os.OpenFile(progress.Path(dir), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
				require.NoError(t, err)
				_, err = f.WriteString(l[:30]) // being written: not read yet
				require.NoError(t, err)
				readSessionLog(dir, rt, who)
				_, err = f.WriteString(l[30:] + "\n")
				require.NoError(t, err)
				require.NoError(t, f.Close())
				got = readSessionLog(dir, rt, who)
				back, ok := decodeRuntime(rt.encode())
				require.True(t, ok)
				rt = back
			}
			assert.Equal(t, want, got)
			assert.Equal(t, logSize(dir), rt.Story.Read)

			// Rewrite what was read: the next read does not look at it.
			log, err := os.ReadFile(progress.Path(dir))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(progress.Path(dir), []byte(strings.ReplaceAll(string(log), "Completed", "Xompleted")), 0o644))
			assert.Equal(t, want, readSessionLog(dir, rt, who))
		})
	}
}

// TestReadSessionLogWithoutOffset: a session whose start found no harness
// state (initialised while it ran) takes the last tailWithoutRuntime lines
// as its own at its first turn end, and from then on reads only what
// follows: a completion early in the session stays in its sum however many
// lines come after it, where reading the recent lines at every turn end
// lost it.
func TestReadSessionLogWithoutOffset(t *testing.T) {
	dir := t.TempDir()
	var before []string
	for i := 0; i < tailWithoutRuntime+10; i++ {
		before = append(before, fmt.Sprintf("[2025-07-01T09:00:00Z] [SESSION-0] CHECKPOINT [task-009] step=1/2 \"old %d\"", i))
	}
	before = append(before, "[2025-07-01T09:30:00Z] [SESSION-0] Completed [task-009] (commit z)") // past the window
	appendLog(t, dir, before...)
	appendLog(t, dir, before[:tailWithoutRuntime-1]...)
	appendLog(t, dir, "[2025-07-01T10:00:00Z] [SESSION-0] Completed [task-001] (commit a)")

	rt := &Runtime{LogOffset: -1}
	got := readSessionLog(dir, rt, owner{})
	assert.Equal(t, []string{"task-001"}, got.completed, "the last lines alone")
	require.GreaterOrEqual(t, rt.LogOffset, int64(0))
	assert.Equal(t, logSize(dir), rt.Story.Read)

	var after []string
	for i := 0; i < 2*tailWithoutRuntime; i++ {
		after = append(after, fmt.Sprintf("[2025-07-01T11:00:00Z] [SESSION-0] CHECKPOINT [task-002] step=1/2 \"new %d\"", i))
	}
	appendLog(t, dir, after...)
	appendLog(t, dir, "[2025-07-01T12:00:00Z] [SESSION-0] Completed [task-002] (commit b)")
	back, ok := decodeRuntime(rt.encode())
	require.True(t, ok)
	got = readSessionLog(dir, back, owner{})
	assert.Equal(t, []string{"task-001", "task-002"}, got.completed, "task-001 is still the session's")
	assert.Equal(t, 2, got.outcomes)
	assert.Equal(t, logSize(dir), back.Story.Read)
}
