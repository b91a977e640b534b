package integrity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/state"
)

// heldProject is a project with two tasks, task-001 claimed, its record
// held as a command of the project's starts.
func heldProject(t *testing.T) (dir string, held *record.Held) {
	dir = t.TempDir()
	t.Setenv("HARNESS_RECORD_DIR", filepath.Join(t.TempDir(), "records"))
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	require.NoError(t, state.Create(dir, time.Now()))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".harness-active"), nil, 0o644))
	require.NoError(t, progress.Append(dir, progress.Entry{Type: progress.Init, Message: "started"}))
	_, err := state.Update(dir, func(s *state.State) error {
		for _, id := range []string{"task-001", "task-002"} {
			s.AddTask(state.Task{ID: id, Title: id, Status: state.Pending, Priority: "P1", MaxAttempts: 3, Command: "true"})
		}
		s.Task("task-001").Status = state.InProgress
		return nil
	})
	require.NoError(t, err)
	return dir, record.Of(dir).Hold()
}

// What happened to the record while a command ran, judged: a harness
// write of another process (through state.Update, which keeps the record)
// is kept, its completions to be verified; a coherent rewrite no verb
// makes, and anything that breaks the mark, is named.
func TestRecordWhy(t *testing.T) {
	tests := []struct {
		name      string
		change    func(t *testing.T, dir string)
		why       string // a part of the answer; "" for none
		completed []string
	}{
		{"nothing", func(*testing.T, string) {}, "", nil},
		{"a legal write of another process", func(t *testing.T, dir string) {
			_, err := state.Update(dir, func(s *state.State) error {
				s.Task("task-002").Status = state.InProgress
				return nil
			})
			require.NoError(t, err)
		}, "", nil},
		{"a completion written with the record", func(t *testing.T, dir string) {
			_, err := state.Update(dir, func(s *state.State) error {
				s.Task("task-002").Status, s.Task("task-002").CompletedAt = state.Completed, "2026-01-01T00:00:00Z"
				return nil
			})
			require.NoError(t, err)
		}, "", []string{"task-002"}},
		{"the log's mirror grown by appends", func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(record.Dir(dir), record.LogMirror), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
			require.NoError(t, err)
			f.WriteString("[t] [SESSION-1] INIT more\n")
			f.Close()
		}, "", nil},
		{"the log's mirror rewritten", func(t *testing.T, dir string) {
			path := filepath.Join(record.Dir(dir), record.LogMirror)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NotEmpty(t, data)
			data[0] ^= 1
			require.NoError(t, os.WriteFile(path, data, 0o600))
		}, "harness-progress.txt: lines the harness wrote were rewritten", nil},
		{"the record's copy alone", func(t *testing.T, dir string) {
			copyPath := filepath.Join(record.Dir(dir), record.TasksCopy)
			data, _ := os.ReadFile(copyPath)
			require.NoError(t, os.WriteFile(copyPath, append(data, ' '), 0o600))
		}, "harness-tasks.json: it is not the tasks file as it is", nil},
		{"the hooks recorded off", func(t *testing.T, dir string) {
			record.Of(dir).SetActive(false)
		}, "mark.json: the harness was recorded as switched off", nil},
		{"a file of its own", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(record.Dir(dir), "extra.json"), []byte("{}"), 0o600))
		}, "extra.json was written", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, held := heldProject(t)
			tt.change(t, dir)
			why, completed := RecordWhy(project.Open(dir), held, held.Moved())
			if tt.why == "" {
				assert.Empty(t, why)
			} else {
				assert.Contains(t, why, tt.why)
			}
			assert.Equal(t, tt.completed, completed)
		})
	}
}

// A judgement kept while a command ran (a hook of a subagent's tool call,
// or the command itself) is no change to refuse the command for, and none
// to trust: it is dropped, and the next check after a tool call judges
// afresh.
func TestHeldRecordDropsAJudgementKeptMeanwhile(t *testing.T) {
	dir, held := heldProject(t)
	judged := filepath.Join(record.Dir(dir), record.Judged)
	require.NoError(t, os.WriteFile(judged, []byte(judgedFormat+"\n"), 0o600))
	rp, put := HeldRecord(project.Open(dir), "a test", held)
	assert.False(t, put, "%+v", rp)
	assert.NoFileExists(t, judged)
}

// A rewrite no verb makes, in the record and the tasks file together: the
// record is put back as held, then the tasks file from it, and both are
// named.
func TestFenceHeldPutsTheRecordBack(t *testing.T) {
	dir, held := heldProject(t)
	before, _ := os.ReadFile(state.Path(dir))
	_, err := state.Update(dir, func(s *state.State) error {
		s.Task("task-001").Checkpoints = nil
		s.Task("task-001").Status = state.Pending
		s.Task("task-001").MaxAttempts = 9
		return nil
	})
	require.NoError(t, err)
	res := FenceHeld(project.Open(dir), "a test", true, held)
	require.True(t, res.Tampered())
	assert.Equal(t, RecordFile, res.Repairs[0].File)
	assert.Contains(t, res.Repairs[0].What, "max_attempts of task-001 may not change")
	after, _ := os.ReadFile(state.Path(dir))
	assert.Equal(t, string(before), string(after))
	copied, _ := record.Of(dir).TasksText()
	assert.Equal(t, string(before), string(copied))
}

// A writer racing a save: the tasks file replaced between the harness's
// write and its record of it. The record keeps the harness's text and not
// the racer's stamp, so the next check compares, finds the racer's file
// and puts the harness's back (before, the racer's stamp was recorded and
// its file taken for the harness's).
func TestRacedSaveIsNotRecorded(t *testing.T) {
	dir, _ := heldProject(t)
	ours, err := os.ReadFile(state.Path(dir))
	require.NoError(t, err)
	forged := []byte(strings.Replace(string(ours), `"pending"`, `"completed"`, 1))
	require.NoError(t, os.WriteFile(state.Path(dir), forged, 0o644)) // the racer, right after our write
	require.NoError(t, record.Of(dir).SaveTasks(ours, true))         // then our record of our write
	res := Check(project.Open(dir), "a test", nil)
	require.True(t, res.Tampered(), "the racer's file was taken for the harness's")
	got, _ := os.ReadFile(state.Path(dir))
	assert.Equal(t, string(ours), string(got))
}

// Another session's verification gate takes a task off the tasks to
// verify while a command runs here: nothing tells its write from the
// command's, so it is no reason to put the record back (the command's
// verdict stands, no TAMPER), and the task goes back on the list for the
// gate to check again.
func TestFenceHeldPutsAVerifiedTaskBackOnTheList(t *testing.T) {
	dir, _ := heldProject(t)
	record.Of(dir).AddUnverified("task-001")
	held := record.Of(dir).Hold()
	record.Of(dir).Verified("task-001")
	m, _ := record.Of(dir).Mark()
	require.NotContains(t, m.Unverified, "task-001")

	res := FenceHeld(project.Open(dir), "a test", true, held)
	assert.False(t, res.Tampered(), "%v", res.Repairs)
	m, _ = record.Of(dir).Mark()
	assert.Contains(t, m.Unverified, "task-001")
	log, _ := os.ReadFile(filepath.Join(dir, "harness-progress.txt"))
	assert.NotContains(t, string(log), "TAMPER")
}
