package state

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/remote"
)

const sharedJobText = `{
  "version": 2,
  "session_config": {"concurrency_mode": "concurrent"},
  "tasks": [
    {"id": "task-001", "title": "One", "status": "pending", "validation": {"command": "true"}},
    {"id": "task-002", "title": "Two", "status": "pending", "validation": {"command": "true"}}
  ],
  "session_count": 1
}
`

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// sharedJob makes a bare repository standing in for the remote and two
// machines' clones, a and b: a publishes the job, b joins it.
func sharedJob(t *testing.T) (a, b string) {
	t.Helper()
	base := t.TempDir()
	bare := filepath.Join(base, "remote.git")
	gitIn(t, base, "init", "-q", "--bare", bare)
	for _, m := range []string{"a", "b"} {
		dir := filepath.Join(base, m)
		require.NoError(t, os.Mkdir(dir, 0o755))
		gitIn(t, dir, "init", "-q")
		gitIn(t, dir, "remote", "add", "origin", bare)
		require.NoError(t, remote.Save(dir, remote.Config{Remote: "origin", Machine: m}))
	}
	a, b = filepath.Join(base, "a"), filepath.Join(base, "b")
	require.NoError(t, os.WriteFile(Path(a), []byte(sharedJobText), 0o644))
	_, err := Update(a, func(s *State) error { s.SessionCount++; return nil })
	require.NoError(t, err, "publishing the job")
	return a, b
}

func remoteTasks(t *testing.T, dir string) *State {
	t.Helper()
	gitIn(t, dir, "fetch", "-q", "origin", "+refs/harness/state:refs/harness/remote/state")
	data, ok := remote.Read(dir, "refs/harness/remote/state", remote.TasksFile)
	require.True(t, ok)
	s, err := Parse(data, "remote")
	require.NoError(t, err)
	return s
}

func TestSharedChangeIsMadeOnTheRemotesState(t *testing.T) {
	a, b := sharedJob(t)
	// b has no tasks file yet: its first change takes the remote's.
	_, err := Update(b, func(s *State) error {
		require.Len(t, s.Tasks, 2)
		s.Task("task-002").Status = InProgress
		s.Task("task-002").ClaimedBy = "b-w1"
		return nil
	})
	require.NoError(t, err)
	s, err := Update(a, func(s *State) error {
		assert.Equal(t, "b-w1", s.Task("task-002").ClaimedBy, "a's change starts from b's")
		s.Task("task-001").Status = InProgress
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, s.SessionCount)
	r := remoteTasks(t, a)
	assert.Equal(t, InProgress, r.Task("task-001").Status)
	assert.Equal(t, "b-w1", r.Task("task-002").ClaimedBy)
	local, err := os.ReadFile(Path(a))
	require.NoError(t, err)
	assert.Equal(t, string(r.Raw()), string(local), "the local file is the remote's")
}

func TestSharedRace(t *testing.T) {
	tests := []struct {
		name     string
		theirs   string // the task a changes just before b pushes
		conflict bool
	}{
		{"other tasks: replayed on the new state", "task-001", false},
		{"the same task: no longer applies", "task-002", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := sharedJob(t)
			_, err := Update(b, func(*State) error { return nil })
			require.NoError(t, err)
			once := true
			beforePush = func() {
				if once {
					once = false
					_, err := Update(a, func(s *State) error { s.Task(tt.theirs).Title = "a's"; return nil })
					require.NoError(t, err)
				}
			}
			defer func() { beforePush = nil }()
			_, err = Update(b, func(s *State) error {
				s.Task("task-002").Priority = "P0"
				return progress.Append(b, progress.Entry{Type: progress.Init, Message: "b's change"})
			})
			r := remoteTasks(t, b)
			log, _ := os.ReadFile(progress.Path(b))
			if tt.conflict {
				var c *Conflict
				require.ErrorAs(t, err, &c)
				assert.Equal(t, "task-002", c.Task)
				assert.Contains(t, err.Error(), "task-002 changed on the remote meanwhile (a: ")
				assert.Equal(t, "a's", r.Task("task-002").Title)
				assert.NotEqual(t, "P0", r.Task("task-002").Priority, "b's change was not made")
				assert.NotContains(t, string(log), "b's change", "a change not made logs nothing of itself")
				assert.Contains(t, string(log), "LOCK remote push of `")
				local, _ := os.ReadFile(Path(b))
				assert.Equal(t, string(r.Raw()), string(local), "b's file is the remote's again")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "a's", r.Task("task-001").Title, "a's change kept")
			assert.Equal(t, "P0", r.Task("task-002").Priority, "b's change replayed on it")
			assert.Contains(t, string(log), "b's change")
			assert.Contains(t, string(log), "; replayed on the new state")
			_, ok := remote.Read(b, "refs/harness/remote/state", remote.LogFile("b"))
			assert.False(t, ok, "a change pushes the tasks file alone")

			// The log goes to b's own ref, and the state ref stays where it is.
			state := remote.TrackedHead(b)
			require.NoError(t, PublishLog(b, map[string][]byte{remote.BoardFile("b"): []byte("{}\n")}))
			_, err = remote.Config{Remote: "origin"}.Fetch(b, remote.MachineRefs)
			require.NoError(t, err)
			assert.Equal(t, state, remote.TrackedHead(b), "publishing a log does not move the state")
			pushed, ok := remote.MachineFile(b, "b", remote.LogFile("b"))
			require.True(t, ok)
			assert.Contains(t, string(pushed), "b's change")
			board, ok := remote.MachineFile(b, "b", remote.BoardFile("b"))
			require.True(t, ok)
			assert.Equal(t, "{}\n", string(board))

			// Another clone publishing under b's name moves b's ref: b's
			// next publication is refused, and says so.
			other, err := remote.Commit(b, "", map[string][]byte{remote.BoardFile("b"): []byte("{\"clone\":\"zzzzzz\"}\n")}, "b: log")
			require.NoError(t, err)
			gitIn(t, b, "push", "-q", "-f", "origin", other+":"+remote.MachineRef("b"))
			require.NoError(t, progress.Append(b, progress.Entry{Type: progress.Init, Message: "more"}))
			assert.ErrorIs(t, PublishLog(b, nil), ErrMachineMoved)
		})
	}
}

func TestSharedUnreachable(t *testing.T) {
	a, _ := sharedJob(t)
	before, err := os.ReadFile(Path(a))
	require.NoError(t, err)
	gitIn(t, a, "remote", "set-url", "origin", filepath.Join(t.TempDir(), "gone.git"))
	_, err = Update(a, func(s *State) error {
		s.Task("task-001").Status = InProgress
		return nil
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the job's remote origin cannot be reached")
	assert.Contains(t, err.Error(), "the change was not made")
	after, _ := os.ReadFile(Path(a))
	assert.Equal(t, string(before), string(after))
}

func TestSharedReplayRules(t *testing.T) {
	base := sharedJobText
	tests := []struct {
		name     string
		mine     func(*State)
		theirs   func(*State)
		conflict string // the task named, "-" for none
		check    func(*testing.T, *State)
	}{
		{"a task added on both sides", func(s *State) { s.AddTask(Task{ID: "task-003", Title: "Mine", Status: Pending}) },
			func(s *State) { s.AddTask(Task{ID: "task-004", Title: "Theirs", Status: Pending}) }, "-",
			func(t *testing.T, s *State) { assert.Len(t, s.Tasks, 4) }},
		{"the same id added on both sides", func(s *State) { s.AddTask(Task{ID: "task-003", Title: "Mine", Status: Pending}) },
			func(s *State) { s.AddTask(Task{ID: "task-003", Title: "Theirs", Status: Pending}) }, "task-003", nil},
		{"session counts add up", func(s *State) { s.SessionCount++ }, func(s *State) { s.SessionCount += 2 }, "-",
			func(t *testing.T, s *State) { assert.Equal(t, 4, s.SessionCount) }},
		{"a task changed on both sides", func(s *State) { s.Task("task-001").Attempts = 1 },
			func(s *State) { s.Task("task-001").Attempts = 2 }, "task-001", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeState(t, base)
			mine, err := Load(dir)
			require.NoError(t, err)
			mine.snapshot()
			tt.mine(mine)
			theirs, err := Load(dir)
			require.NoError(t, err)
			theirs.snapshot()
			tt.theirs(theirs)
			theirsDoc, _, err := theirs.apply()
			require.NoError(t, err)
			doc, c := replay(mine, theirsDoc, "them")
			if tt.conflict != "-" {
				require.NotNil(t, c)
				assert.Equal(t, tt.conflict, c.Task)
				return
			}
			require.Nil(t, c)
			got, err := Parse(doc, "merged")
			require.NoError(t, err)
			tt.check(t, got)
		})
	}
}
