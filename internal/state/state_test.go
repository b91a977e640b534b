package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/progress"
)

const sample = `{
  "version": 2,
  "created": "2025-07-01T10:00:00Z",
  "x-team": {"owner": "ana",   "tags": ["a","b"]},
  "session_config": {
    "concurrency_mode": "exclusive",
    "max_tasks_per_session": 20,
    "max_sessions": 50,
    "my_setting": true
  },
  "tasks": [
    {
      "id": "task-001",
      "title": "Implement user authentication",
      "status": "pending",
      "priority": "P0",
      "depends_on": [],
      "attempts": 0,
      "max_attempts": 3,
      "started_at_commit": null,
      "validation": {"command": "npm test", "timeout_seconds": 300},
      "on_failure": {"cleanup": null},
      "error_log": [],
      "checkpoints": [],
      "completed_at": null,
      "owner_note":   "keep   this   spacing"
    }
  ],
  "session_count": 1,
  "last_session": "2025-07-01T10:20:02Z"
}
`

func writeState(t *testing.T, content string) string {
	t.Helper()
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(Path(dir), []byte(content), 0o644))
	return dir
}

func TestUnknownFieldsSurviveWrites(t *testing.T) {
	dir := writeState(t, sample)
	_, err := Update(dir, func(s *State) error {
		tk := s.Task("task-001")
		tk.Status = InProgress
		tk.Attempts = 1
		tk.ErrorLog = append(tk.ErrorLog, "[TEST_FAIL] boom")
		tk.Checkpoints = append(tk.Checkpoints, Checkpoint{Step: 1, Total: 2, Description: "half", Timestamp: "2025-07-01T10:05:00Z"})
		s.SessionCount = 2
		s.AddTask(Task{ID: "task-002", Title: "Next", Status: Pending, Priority: "P1", MaxAttempts: 3})
		return nil
	})
	require.NoError(t, err)
	out, err := os.ReadFile(Path(dir))
	require.NoError(t, err)
	text := string(out)
	for _, keep := range []string{
		`"x-team": {"owner": "ana",   "tags": ["a","b"]},`,
		`"my_setting": true`,
		`"owner_note":   "keep   this   spacing"`,
		`"validation": {"command": "npm test", "timeout_seconds": 300},`,
	} {
		assert.Contains(t, text, keep, "untouched bytes must survive")
	}
	s, err := Load(dir)
	require.NoError(t, err)
	require.Len(t, s.Tasks, 2)
	assert.Equal(t, InProgress, s.Tasks[0].Status)
	assert.Equal(t, []string{"[TEST_FAIL] boom"}, s.Tasks[0].ErrorLog)
	assert.Equal(t, 2, s.SessionCount)
	assert.Equal(t, "task-002", s.Tasks[1].ID)
	assert.Equal(t, 3, s.Tasks[1].MaxAttempts)

	bak, err := os.ReadFile(BackupPath(dir))
	require.NoError(t, err)
	live, err := os.ReadFile(Path(dir))
	require.NoError(t, err)
	assert.Equal(t, string(live), string(bak), "the backup is the last state the harness wrote")
	liveInfo, err := os.Stat(Path(dir))
	require.NoError(t, err)
	bakInfo, err := os.Stat(BackupPath(dir))
	require.NoError(t, err)
	assert.False(t, os.SameFile(liveInfo, bakInfo), "the backup must never be a second name of the live file")
}

func TestNoChangeNoWrite(t *testing.T) {
	dir := writeState(t, sample)
	_, err := Update(dir, func(s *State) error { return nil })
	require.NoError(t, err)
	_, err = os.Stat(BackupPath(dir))
	assert.True(t, os.IsNotExist(err), "an unchanged state is not rewritten")
}

func TestSchemaErrors(t *testing.T) {
	task := func(extra string) string {
		return `{"tasks":[{"id":"task-001","title":"t","status":"pending"` + extra + `}]}`
	}
	tests := []struct {
		name, doc, want string
	}{
		{"attempts as string", task(`,"attempts":"3"`), `tasks[0].attempts (task-001) must be a whole number ≥ 0, got string "3"`},
		{"tasks not a list", `{"tasks":{"a":1}}`, "tasks must be a list, got an object"},
		{"tasks missing", `{"version":2}`, "tasks is missing"},
		{"id missing", `{"tasks":[{"title":"t","status":"pending"}]}`, "tasks[0].id is missing or empty"},
		{"id a number", `{"tasks":[{"id":7,"status":"pending"}]}`, "tasks[0].id must be a string, got number 7"},
		{"status unknown", `{"tasks":[{"id":"a","status":"done"}]}`, `tasks[0].status (a) must be one of pending, in_progress, completed, failed; got "done"`},
		{"status missing", `{"tasks":[{"id":"a"}]}`, "tasks[0].status (a) is missing"},
		{"depends_on wrong", task(`,"depends_on":"task-000"`), "tasks[0].depends_on (task-001) must be a list of strings"},
		{"depends_on element", task(`,"depends_on":[1]`), "tasks[0].depends_on[0] (task-001) must be a string, got number 1"},
		{"negative max", task(`,"max_attempts":-1`), "tasks[0].max_attempts (task-001) must be a whole number ≥ 0"},
		{"validation string", task(`,"validation":"npm test"`), "tasks[0].validation (task-001) must be an object"},
		{"config mode", `{"session_config":{"concurrency_mode":"both"},"tasks":[]}`, `session_config.concurrency_mode must be "exclusive" or "concurrent", got "both"`},
		{"duplicate id", `{"tasks":[{"id":"a","status":"pending"},{"id":"a","status":"pending"}]}`, `tasks[1].id duplicates tasks[0].id "a"`},
		{"not an object", `[1,2]`, "the document must be a JSON object"},
		{"duplicate key", `{"tasks":[{"id":"a","status":"failed","attempts":0,"attempts":1}]}`, "tasks[0].attempts (a) appears twice in the same task"},
		{"checkpoint step", task(`,"checkpoints":[{"step":"1"}]`), "tasks[0].checkpoints[0].step (task-001) must be a whole number"},
		// A member written twice, at every level the harness reads: gjson takes
		// the first, other tools the last.
		{"tasks twice", `{"tasks":[],"tasks":[{"id":"a","status":"pending"}]}`, "tasks appears twice at the top level"},
		{"session_count twice", `{"tasks":[],"session_count":1,"session_count":2}`, "session_count appears twice at the top level"},
		{"session_config twice", `{"session_config":{},"tasks":[],"session_config":{"max_sessions":1}}`, "session_config appears twice at the top level"},
		{"config key twice", `{"session_config":{"concurrency_mode":"exclusive","concurrency_mode":"concurrent"},"tasks":[]}`, "session_config.concurrency_mode appears twice in session_config"},
		{"id twice", `{"tasks":[{"id":"a","status":"pending","id":"b"}]}`, "tasks[0].id appears twice in the same task"},
		{"duplicate key with a bad second value", `{"tasks":[{"id":"a","status":"failed","attempts":0,"attempts":"1"}]}`, "tasks[0].attempts (a) appears twice in the same task"},
		{"validation command twice", task(`,"validation":{"command":"a","timeout_seconds":5,"command":"b"}`), "tasks[0].validation.command (task-001) appears twice in validation"},
		{"cleanup twice", task(`,"on_failure":{"cleanup":"a","cleanup":null}`), "tasks[0].on_failure.cleanup (task-001) appears twice in on_failure"},
		{"checkpoint step twice", task(`,"checkpoints":[{"step":1,"total":2},{"step":1,"total":2,"step":2}]`), "tasks[0].checkpoints[1].step (task-001) appears twice in the same checkpoint"},
		{"review a string", task(`,"review":"yes"`), `tasks[0].review (task-001) must be true or false, got string "yes"`},
		{"acceptance a string", task(`,"acceptance":"works"`), `tasks[0].acceptance (task-001) must be a list of strings, got string "works"`},
		{"config review a bool", `{"session_config":{"review":true},"tasks":[]}`, `session_config.review must be an object {"enabled": true, "timeout_seconds": …, "model": …}, got boolean true`},
		{"config review enabled", `{"session_config":{"review":{"enabled":"yes"}},"tasks":[]}`, `session_config.review.enabled must be true or false, got string "yes"`},
		{"config review timeout", `{"session_config":{"review":{"timeout_seconds":-5}},"tasks":[]}`, `session_config.review.timeout_seconds must be a whole number ≥ 0, got number -5`},
		{"config review twice", `{"session_config":{"review":{"model":"a","model":"b"}},"tasks":[]}`, `session_config.review.model appears twice in session_config.review`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "/p/harness-tasks.json")
			require.Error(t, err)
			assert.True(t, failure.Is(err, failure.Config), "CONFIG error, got %v", err)
			assert.Contains(t, err.Error(), "/p/harness-tasks.json: ")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// A user's own member written twice is not the harness's business: it
// neither reads nor edits it.
func TestUnknownMembersTwiceAccepted(t *testing.T) {
	doc := `{"mine":1,"mine":2,"session_config":{"x":1,"x":2},"tasks":[{"id":"a","status":"pending","note":"x","note":"y",` +
		`"validation":{"command":"true","why":1,"why":2},"checkpoints":[{"step":1,"total":1,"by":"a","by":"b"}]}]}`
	s, err := Parse([]byte(doc), "x")
	require.NoError(t, err)
	assert.Equal(t, "true", s.Tasks[0].Command)
}

// Whether a task is reviewed: its own review member, else session_config's.
func TestReviewed(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want []bool
	}{
		{`{"tasks":[{"id":"a","status":"pending"},{"id":"b","status":"pending","review":true},{"id":"c","status":"pending","review":false},{"id":"d","status":"pending","review":null}]}`,
			[]bool{false, true, false, false}},
		{`{"session_config":{"review":{"enabled":true,"timeout_seconds":90,"model":"opus"}},"tasks":[{"id":"a","status":"pending"},{"id":"b","status":"pending","review":true},{"id":"c","status":"pending","review":false}]}`,
			[]bool{true, true, false}},
	} {
		s, err := Parse([]byte(tt.doc), "x")
		require.NoError(t, err)
		for i, want := range tt.want {
			assert.Equal(t, want, s.Tasks[i].Reviewed(s.Config), "%s in %s", s.Tasks[i].ID, tt.doc)
		}
	}
	s, err := Parse([]byte(`{"session_config":{"review":{"enabled":true,"timeout_seconds":90,"model":"opus"}},"tasks":[]}`), "x")
	require.NoError(t, err)
	assert.Equal(t, ReviewConfig{Enabled: true, TimeoutSeconds: 90, Model: "opus"}, s.Config.Review)
	assert.Equal(t, 90*time.Second, s.Config.Review.Timeout())
	assert.Equal(t, DefaultReviewTimeoutSeconds*time.Second, ReviewConfig{}.Timeout())
}

// The reviewer gate and the criteria it judges by are a person's: a hand
// edit may not change them.
func TestHandEditOfReviewAndAcceptance(t *testing.T) {
	before := Task{ID: "a", Review: ReviewOn, Acceptance: []string{"works"}}
	off := before.clone()
	off.Review = ReviewOff
	assert.Contains(t, HandEditBreaks(&before, &off), "review of a may not change by hand")
	unset := before.clone()
	unset.Review = ""
	assert.Contains(t, HandEditBreaks(&before, &unset), "review of a may not change by hand")
	fewer := before.clone()
	fewer.Acceptance = nil
	assert.Contains(t, HandEditBreaks(&before, &fewer), "the acceptance criteria of a may not change by hand")
	same := before.clone()
	assert.Empty(t, HandEditBreaks(&before, &same))
}

func TestDefaults(t *testing.T) {
	s, err := Parse([]byte(`{"tasks":[{"id":"a","title":"t","status":"pending"}]}`), "x")
	require.NoError(t, err)
	tk := s.Tasks[0]
	assert.Equal(t, DefaultMaxAttempts, tk.MaxAttempts)
	assert.Equal(t, DefaultTimeoutSeconds*time.Second, tk.Timeout())
	assert.Equal(t, Exclusive, s.Config.ConcurrencyMode)
	assert.True(t, s.Config.VerifyOnStop)
	assert.Equal(t, DefaultReflect, s.Config.MaxReflectIterations)
}

func TestCorruptRestoredFromBackup(t *testing.T) {
	dir := writeState(t, sample)
	require.NoError(t, os.WriteFile(BackupPath(dir), []byte(sample), 0o644))
	require.NoError(t, os.WriteFile(Path(dir), []byte(`{"tasks": [ {"id": "task-0`), 0o644))

	s, err := Load(dir)
	require.NoError(t, err)
	assert.True(t, s.FromBackup, "a read-only load reads the backup without writing")

	s, err = Update(dir, func(s *State) error { return nil })
	require.NoError(t, err)
	assert.False(t, s.FromBackup)
	restored, _ := os.ReadFile(Path(dir))
	assert.Equal(t, sample, string(restored))
	kept, _ := filepath.Glob(Path(dir) + ".corrupt-*")
	assert.Len(t, kept, 1, "the corrupt file is kept for inspection")
	log, _ := os.ReadFile(filepath.Join(dir, "harness-progress.txt"))
	assert.Regexp(t, `\[SESSION-1\] RECOVERY action="restored harness-tasks.json from harness-tasks.json.bak"`, string(log))
}

func TestCorruptWithoutBackupRefused(t *testing.T) {
	for name, bak := range map[string]*string{"no backup": nil, "bad backup": ptr("nope")} {
		t.Run(name, func(t *testing.T) {
			dir := writeState(t, "{broken")
			if bak != nil {
				require.NoError(t, os.WriteFile(BackupPath(dir), []byte(*bak), 0o644))
			}
			_, err := Update(dir, func(s *State) error { t.Fatal("must not run"); return nil })
			require.Error(t, err)
			assert.Equal(t, "ERROR [ENV_SETUP] harness-tasks.json corrupted and unrecoverable", err.Error())
			left, _ := os.ReadFile(Path(dir))
			assert.Equal(t, "{broken", string(left), "never silently replaced")
		})
	}
}

func ptr(s string) *string { return &s }

func TestNotFound(t *testing.T) {
	_, err := Load(t.TempDir())
	assert.ErrorIs(t, err, ErrNotFound)
}

func TestCreateIsExclusive(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Create(dir, time.Now()))
	assert.True(t, os.IsExist(Create(dir, time.Now())))
	s, err := Load(dir)
	require.NoError(t, err)
	assert.Empty(t, s.Tasks)
	assert.Equal(t, 50, s.Config.MaxSessions)
}

// bigState renders n tasks, each depending on its predecessor.
func bigState(n int) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"version\": 2,\n  \"session_config\": {\"concurrency_mode\": \"exclusive\"},\n  \"tasks\": [\n")
	for i := 1; i <= n; i++ {
		dep := ""
		if i > 1 {
			dep = fmt.Sprintf(`"task-%05d"`, i-1)
		}
		status := Pending
		if i <= n/2 {
			status = Completed
		}
		fmt.Fprintf(&b, `    {"id": "task-%05d", "title": "Task number %d", "status": %q, "priority": "P%d", "depends_on": [%s], "attempts": 1, "max_attempts": 3, "started_at_commit": null, "validation": {"command": "go test ./pkg%d/...", "timeout_seconds": 120}, "on_failure": {"cleanup": null}, "error_log": [], "checkpoints": [{"step": 1, "total": 2, "description": "half way", "timestamp": "2025-07-01T10:05:00Z"}], "completed_at": null}`,
			i, i, status, i%3, dep, i)
		if i < n {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("  ],\n  \"session_count\": 3,\n  \"last_session\": null\n}\n")
	return []byte(b.String())
}

func TestTenThousandTasks(t *testing.T) {
	dir := writeState(t, string(bigState(10000)))
	s, err := Update(dir, func(s *State) error {
		s.Tasks[9999].Status = InProgress
		return nil
	})
	require.NoError(t, err)
	require.Len(t, s.Tasks, 10000)
	s, err = Load(dir)
	require.NoError(t, err)
	assert.Equal(t, InProgress, s.Tasks[9999].Status)
	assert.Equal(t, Completed, s.Tasks[0].Status)
}

func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		raw := bigState(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for i := 0; i < b.N; i++ {
				if _, err := Parse(raw, "x"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSkim(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		raw := bigState(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for i := 0; i < b.N; i++ {
				if _, err := Skim(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkUpdate(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.Setenv("HARNESS_LOCK_DIR", b.TempDir())
			dir := b.TempDir()
			require.NoError(b, os.WriteFile(Path(dir), bigState(n), 0o644))
			for i := 0; i < b.N; i++ {
				if _, err := Update(dir, func(s *State) error {
					s.SessionCount++
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestUnchangedCoversEveryField guards the fast path of save: a change to
// any written field must be seen.
func TestUnchangedCoversEveryField(t *testing.T) {
	base := Task{ID: "a", Title: "t", Status: Pending, DependsOn: []string{}, ErrorLog: []string{}}
	edits := map[string]func(*Task){
		"id": func(t *Task) { t.ID = "b" }, "title": func(t *Task) { t.Title = "x" }, "status": func(t *Task) { t.Status = Failed },
		"priority": func(t *Task) { t.Priority = "P0" }, "depends_on": func(t *Task) { t.DependsOn = []string{"b"} },
		"attempts": func(t *Task) { t.Attempts++ }, "max_attempts": func(t *Task) { t.MaxAttempts = 9 },
		"started_at_commit": func(t *Task) { t.StartedAtCommit = "abc" }, "command": func(t *Task) { t.Command = "x" },
		"timeout": func(t *Task) { t.TimeoutSeconds = 9 }, "cleanup": func(t *Task) { t.Cleanup = "x" },
		"error_log":    func(t *Task) { t.ErrorLog = append(t.ErrorLog, "x") },
		"checkpoints":  func(t *Task) { t.Checkpoints = append(t.Checkpoints, Checkpoint{Step: 1}) },
		"completed_at": func(t *Task) { t.CompletedAt = "x" }, "failed_at": func(t *Task) { t.FailedAt = "x" },
		"claimed_by": func(t *Task) { t.ClaimedBy = "x" }, "claimed_at": func(t *Task) { t.ClaimedAt = "x" },
		"lease": func(t *Task) { t.LeaseExpiresAt = "x" }, "allowed_paths": func(t *Task) { t.AllowedPaths = []string{} },
		"worktree": func(t *Task) { t.Worktree = "x" }, "claimed_clone": func(t *Task) { t.ClaimedClone = "x" }, "claim_generation": func(t *Task) { t.Generation++ },
		"validated_commit": func(t *Task) { t.ValidatedCommit = "x" }, "validated_at": func(t *Task) { t.ValidatedAt = "x" },
		"integrated_commit": func(t *Task) { t.IntegratedCommit = "x" },
		"source":            func(t *Task) { t.Source = "x" },
		"description":       func(t *Task) { t.Description = "x" }, "acceptance": func(t *Task) { t.Acceptance = []string{"x"} },
		"review": func(t *Task) { t.Review = ReviewOn },
	}
	require.Len(t, edits, len(taskSchema), "every member of the schema has an edit here")
	require.Less(t, len(taskSchema), 60, "the parsers' duplicate check gives each plain member a bit of a uint64 below the four special ones")
	for name, edit := range edits {
		after := base.clone()
		edit(&after)
		assert.False(t, unchanged(&base, &after), name)
	}
	same := base.clone()
	assert.True(t, unchanged(&base, &same))
}

// A failure is for good when the attempts are spent or the last error_log
// entry is a [DEPENDENCY] one: a task reopened by `harness retry` keeps its
// old entries, and one that fails again for another reason has attempts
// left like any task.
func TestPermanentlyFailed(t *testing.T) {
	tests := []struct {
		name         string
		task         Task
		dep, forGood bool
	}{
		{"attempts left", Task{Status: Failed, Attempts: 1, MaxAttempts: 3, ErrorLog: []string{"[TEST_FAIL] x"}}, false, false},
		{"attempts spent", Task{Status: Failed, Attempts: 3, MaxAttempts: 3, ErrorLog: []string{"[TEST_FAIL] x"}}, false, true},
		{"failed [DEPENDENCY]", Task{Status: Failed, MaxAttempts: 3, ErrorLog: []string{"[DEPENDENCY] Blocked by failed a"}}, true, true},
		{"reopened, failed again", Task{Status: Failed, Attempts: 1, MaxAttempts: 3, ErrorLog: []string{"[DEPENDENCY] Circular", "[TEST_FAIL] x"}}, false, false},
		{"reopened, pending", Task{Status: Pending, MaxAttempts: 3, ErrorLog: []string{"[DEPENDENCY] Circular"}}, true, false},
		{"no errors", Task{Status: Failed, MaxAttempts: 3}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.dep, tt.task.HasDependencyError())
			assert.Equal(t, tt.forGood, tt.task.PermanentlyFailed())
		})
	}
}

// The lines a change logs are written after the state file: a reader who
// sees "task-001 released" in the log finds the state that says so. Inside
// the change the line is not in the log yet; after it, both are.
func TestUpdateLogsAfterTheFile(t *testing.T) {
	dir := writeState(t, sample)
	logged := func() string {
		data, _ := os.ReadFile(filepath.Join(dir, progress.FileName))
		return string(data)
	}
	_, err := Update(dir, func(s *State) error {
		s.Task("task-001").Status = InProgress
		require.NoError(t, progress.Append(dir, progress.Entry{Type: progress.Lock, Message: "task-001 claimed"}))
		assert.NotContains(t, logged(), "task-001 claimed", "not in the log before the file is written")
		return nil
	})
	require.NoError(t, err)
	assert.Contains(t, logged(), "task-001 claimed")
	s, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, InProgress, s.Task("task-001").Status)

	// A refused change's lines are true, and logged.
	_, err = Update(dir, func(s *State) error {
		progress.Append(dir, progress.Entry{Type: progress.Error, Message: "refused"})
		return errors.New("no")
	})
	require.Error(t, err)
	assert.Contains(t, logged(), "refused")
}
