package state

import (
	"errors"
	"fmt"
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

// remoteTasks is the tasks file the remote's refs make, fetched into dir.
func remoteTasks(t *testing.T, dir string) *State {
	t.Helper()
	_, err := remote.Config{Remote: "origin"}.Fetch(dir)
	require.NoError(t, err)
	data, err := Composed(dir)
	require.NoError(t, err)
	s, err := Parse(data, "remote")
	require.NoError(t, err)
	return s
}

// remoteRefs lists where the job's refs are on the remote of dir: the
// state ref and each task's.
func remoteRefs(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := gitIn(t, dir, "ls-remote", "origin", "refs/harness/state", "refs/harness/tasks/*")
	refs := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if commit, ref, ok := strings.Cut(l, "\t"); ok {
			refs[ref] = commit
		}
	}
	return refs
}

// claimTask is a claim of task id by worker, as taskcycle makes it.
func claimTask(id, worker, lease string) func(*State) error {
	return func(s *State) error {
		t := s.Task(id)
		if t.Status != Pending {
			return fmt.Errorf("%s is %s", id, t.Status)
		}
		t.Status, t.ClaimedBy, t.LeaseExpiresAt = InProgress, worker, lease
		t.Generation++
		return nil
	}
}

// claimAny claims the first pending task for worker, as a claim that
// lost its task claims again.
func claimAny(worker string) func(*State) error {
	return func(s *State) error {
		for i := range s.Tasks {
			if s.Tasks[i].Status == Pending {
				return claimTask(s.Tasks[i].ID, worker, future)(s)
			}
		}
		return errors.New("nothing to claim")
	}
}

const future = "2999-01-01T00:00:00Z"

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
		theirs   func(*State) // a's change, made just before b pushes
		mine     func(*State)
		raced    bool   // b's push lost the race and was replayed
		conflict string // the task b's change no longer applies to
		check    func(*testing.T, *State)
	}{
		{"another task: no race",
			func(s *State) { s.Task("task-001").Title = "a's" },
			func(s *State) { s.Task("task-002").Priority = "P0" }, false, "",
			func(t *testing.T, r *State) {
				assert.Equal(t, "a's", r.Task("task-001").Title, "a's change kept")
				assert.Equal(t, "P0", r.Task("task-002").Priority, "b's change made")
			}},
		{"the job on both sides: replayed on the new state",
			func(s *State) { s.SessionCount++ },
			func(s *State) { s.SessionCount++; s.Task("task-002").Priority = "P0" }, true, "",
			func(t *testing.T, r *State) {
				assert.Equal(t, 4, r.SessionCount, "both counted")
				assert.Equal(t, "P0", r.Task("task-002").Priority)
			}},
		{"the same task: no longer applies",
			func(s *State) { s.Task("task-002").Title = "a's" },
			func(s *State) { s.Task("task-002").Priority = "P0" }, true, "task-002",
			func(t *testing.T, r *State) {
				assert.Equal(t, "a's", r.Task("task-002").Title)
				assert.NotEqual(t, "P0", r.Task("task-002").Priority, "b's change was not made")
			}},
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
					_, err := Update(a, func(s *State) error { tt.theirs(s); return nil })
					require.NoError(t, err)
				}
			}
			defer func() { beforePush = nil }()
			_, err = Update(b, func(s *State) error {
				tt.mine(s)
				return progress.Append(b, progress.Entry{Type: progress.Init, Message: "b's change"})
			})
			r := remoteTasks(t, b)
			tt.check(t, r)
			log, _ := os.ReadFile(progress.Path(b))
			local, _ := os.ReadFile(Path(b))
			if tt.conflict != "" {
				assert.Equal(t, string(r.Raw()), string(local), "b's file is the remote's again")
				var c *Conflict
				require.ErrorAs(t, err, &c)
				assert.Equal(t, tt.conflict, c.Task)
				assert.Contains(t, err.Error(), tt.conflict+" changed on the remote meanwhile (a: ")
				assert.NotContains(t, string(log), "b's change", "a change not made logs nothing of itself")
				assert.Contains(t, string(log), "LOCK remote push of `")
				return
			}
			require.NoError(t, err)
			assert.Contains(t, string(log), "b's change")
			// A change that did not race knows nothing of a's yet: b's
			// next fetch brings it.
			mine, err := Parse(local, "b")
			require.NoError(t, err)
			assert.Equal(t, "P0", mine.Task("task-002").Priority)
			_, err = Sync(b)
			require.NoError(t, err)
			local, _ = os.ReadFile(Path(b))
			assert.Equal(t, string(r.Raw()), string(local), "b's file is what the remote's refs make")
			if tt.raced {
				assert.Contains(t, string(log), "rejected: refs/harness/state moved (a: ")
				assert.Contains(t, string(log), "; replayed on the new state")
			} else {
				assert.NotContains(t, string(log), "LOCK remote push of `", "changes of different tasks do not race")
			}
			_, ok := remote.Read(b, "refs/harness/remote/state", remote.LogFile("b"))
			assert.False(t, ok, "a change pushes the tasks file alone")
		})
	}
}

func TestSharedLogOnTheMachinesRef(t *testing.T) {
	a, b := sharedJob(t)
	_, err := Update(b, func(s *State) error {
		s.Task("task-002").Priority = "P0"
		return progress.Append(b, progress.Entry{Type: progress.Init, Message: "b's change"})
	})
	require.NoError(t, err)
	_, err = Update(a, func(s *State) error { s.SessionCount++; return nil })
	require.NoError(t, err)

	// The log goes to b's own ref, and the state ref stays where it is.
	state := remote.TrackedHead(b)
	require.NoError(t, PublishLog(b, map[string][]byte{remote.BoardFile("b"): []byte("{}\n")}))
	_, err = remote.Config{Remote: "origin"}.Fetch(b, remote.MachineRefs)
	require.NoError(t, err)
	assert.NotEqual(t, state, remote.TrackedHead(b), "a's change fetched")
	state = remote.TrackedHead(b)
	require.NoError(t, PublishLog(b, map[string][]byte{remote.BoardFile("b"): []byte("{\"more\": 1}\n")}))
	assert.Equal(t, state, remoteRefs(t, b)[remote.StateRef], "publishing a log does not move the state")
	pushed, ok := remote.MachineFile(b, "b", remote.LogFile("b"))
	require.True(t, ok)
	assert.Contains(t, string(pushed), "b's change")
	board, ok := remote.MachineFile(b, "b", remote.BoardFile("b"))
	require.True(t, ok)
	assert.Equal(t, "{\"more\": 1}\n", string(board))

	// Another clone publishing under b's name moves b's ref: b's
	// next publication is refused, and says so.
	other, err := remote.Commit(b, "", map[string][]byte{remote.BoardFile("b"): []byte("{\"clone\":\"zzzzzz\"}\n")}, "b: log")
	require.NoError(t, err)
	gitIn(t, b, "push", "-q", "-f", "origin", other+":"+remote.MachineRef("b"))
	require.NoError(t, progress.Append(b, progress.Entry{Type: progress.Init, Message: "more"}))
	assert.ErrorIs(t, PublishLog(b, nil), ErrMachineMoved)
	// So it is when the other clone's commit was fetched meanwhile (the
	// supervisor fetches every machine's ref): nothing is pushed on it.
	_, err = Sync(b, remote.MachineRefs)
	require.NoError(t, err)
	assert.ErrorIs(t, PublishLog(b, nil), ErrMachineMoved)
	assert.Equal(t, other, remoteRefsOf(t, b, remote.MachineRef("b")))
	// The name judged free, b takes the ref where it is now.
	require.NoError(t, TakeMachineRef(b))
	require.NoError(t, PublishLog(b, nil))
	pushed, ok = remote.MachineFile(b, "b", remote.LogFile("b"))
	require.True(t, ok)
	assert.Contains(t, string(pushed), "more")
}

// remoteRefsOf is where ref is on the remote of dir.
func remoteRefsOf(t *testing.T, dir, ref string) string {
	t.Helper()
	out := gitIn(t, dir, "ls-remote", "origin", ref)
	commit, _, _ := strings.Cut(out, "\t")
	return commit
}

// moves lists the refs that moved between two listings of remoteRefs.
func moves(before, after map[string]string) []string {
	var out []string
	for ref, commit := range after {
		if before[ref] != commit {
			out = append(out, ref)
		}
	}
	for ref := range before {
		if _, ok := after[ref]; !ok {
			out = append(out, ref)
		}
	}
	return out
}

// TestSharedClaims: a claim, its renewal, its reap and its validation move
// the claimed task's ref alone; claims of different tasks do not race,
// claims of one task do, and the loser claims another.
func TestSharedClaims(t *testing.T) {
	const past = "2000-01-01T00:00:00Z"
	type step struct {
		who   string // a or b
		fn    func(*State) error
		other func(*State) error // a's change made just before b's push, when set
		moved []string           // the refs the step (and other) moved on the remote
		raced bool               // b's push lost a race
		check func(*testing.T, *State)
	}
	task1, task2 := remote.TaskRef("task-001"), remote.TaskRef("task-002")
	tests := []struct {
		name  string
		steps []step
	}{
		{"two machines claiming different tasks do not race", []step{
			{"b", claimTask("task-002", "b-w1", future), claimTask("task-001", "a-w1", future), []string{task1, task2}, false,
				func(t *testing.T, r *State) {
					assert.Equal(t, "a-w1", r.Task("task-001").ClaimedBy)
					assert.Equal(t, "b-w1", r.Task("task-002").ClaimedBy)
				}},
		}},
		{"two machines racing for one task: one wins, the other claims another", []step{
			{"b", claimTask("task-002", "b-w1", future), claimTask("task-002", "a-w1", future), []string{task2}, true,
				func(t *testing.T, r *State) { assert.Equal(t, "a-w1", r.Task("task-002").ClaimedBy, "a won") }},
			{"b", claimAny("b-w1"), nil, []string{task1}, false,
				func(t *testing.T, r *State) {
					assert.Equal(t, "b-w1", r.Task("task-001").ClaimedBy, "b took the other")
				}},
		}},
		{"a renewal moves its claim alone", []step{
			{"a", claimTask("task-001", "a-w1", "2999-01-01T00:00:00Z"), nil, []string{task1}, false, nil},
			{"b", claimTask("task-002", "b-w1", future), nil, []string{task2}, false, nil},
			{"a", func(s *State) error { s.Task("task-001").LeaseExpiresAt = "2999-06-01T00:00:00Z"; return nil }, nil, []string{task1}, false,
				func(t *testing.T, r *State) {
					assert.Equal(t, "2999-06-01T00:00:00Z", r.Task("task-001").LeaseExpiresAt)
					assert.Equal(t, "b-w1", r.Task("task-002").ClaimedBy)
				}},
		}},
		{"a task removed: the state ref moves, and the task's ref goes", []step{
			{"a", claimTask("task-001", "a-w1", future), nil, []string{task1}, false, nil},
			{"b", func(s *State) error { s.RemoveTasks("task-001"); return nil }, nil, []string{remote.StateRef, task1}, false,
				func(t *testing.T, r *State) {
					assert.Nil(t, r.Task("task-001"))
					assert.Len(t, r.Tasks, 1)
				}},
		}},
		{"tasks added: the state ref moves alone", []step{
			{"a", func(s *State) error { s.AddTask(Task{ID: "task-003", Title: "Three", Status: Pending}); return nil }, nil, []string{remote.StateRef}, false,
				func(t *testing.T, r *State) { assert.NotNil(t, r.Task("task-003")) }},
		}},
		{"an expired claim reaped by another machine moves that claim alone", []step{
			{"a", claimTask("task-001", "a-w1", past), nil, []string{task1}, false, nil},
			{"b", claimTask("task-002", "b-w1", future), nil, []string{task2}, false, nil},
			{"b", func(s *State) error {
				t := s.Task("task-001")
				t.ClaimedBy, t.LeaseExpiresAt, t.Attempts = "b-w2", future, t.Attempts+1
				t.Generation++
				return nil
			}, nil, []string{task1}, false, func(t *testing.T, r *State) {
				assert.Equal(t, "b-w2", r.Task("task-001").ClaimedBy)
				assert.Equal(t, 2, r.Task("task-001").Generation)
			}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := sharedJob(t)
			dirs := map[string]string{"a": a, "b": b}
			defer func() { beforePush = nil }()
			for i, st := range tt.steps {
				before := remoteRefs(t, a)
				beforePush = nil
				if st.other != nil {
					once := true
					beforePush = func() {
						if once {
							once = false
							_, err := Update(a, st.other)
							require.NoError(t, err)
						}
					}
				}
				dir := dirs[st.who]
				logBefore, _ := os.ReadFile(progress.Path(dir))
				_, err := Update(dir, st.fn)
				if st.raced && st.other != nil {
					var c *Conflict
					require.ErrorAs(t, err, &c, "step %d", i)
				} else {
					require.NoError(t, err, "step %d", i)
				}
				after := remoteRefs(t, a)
				assert.ElementsMatch(t, st.moved, moves(before, after), "step %d: the refs moved", i)
				for _, d := range []string{a, b} {
					local, _ := os.ReadFile(Path(d))
					made, err := Composed(d)
					require.NoError(t, err)
					assert.Equal(t, string(made), string(local), "step %d: the local file is what the refs last fetched make, byte for byte", i)
				}
				log, _ := os.ReadFile(progress.Path(dir))
				lost := strings.Count(string(log), "LOCK remote push of `") - strings.Count(string(logBefore), "LOCK remote push of `")
				assert.Equal(t, st.raced, lost > 0, "step %d: lost a race", i)
				if st.check != nil {
					st.check(t, remoteTasks(t, dir))
				}
			}
		})
	}
}

// TestSharedCrashAfterPush: a change published whose machine died before
// it wrote its own file loses nothing: the next change finds the refs
// ahead of the file and makes it from them first.
func TestSharedCrashAfterPush(t *testing.T) {
	a, _ := sharedJob(t)
	before, err := os.ReadFile(Path(a))
	require.NoError(t, err)
	synced := remote.ReadSynced(a)
	_, err = Update(a, claimTask("task-001", "a-w1", future))
	require.NoError(t, err)
	// The crash: the local file and its record of the refs as they were.
	require.NoError(t, Restore(a, before))
	remote.WriteSynced(a, synced)

	s, err := Update(a, claimTask("task-002", "a-w2", future))
	require.NoError(t, err)
	assert.Equal(t, "a-w1", s.Task("task-001").ClaimedBy, "the published claim is kept")
	assert.Equal(t, "a-w2", s.Task("task-002").ClaimedBy)
	local, _ := os.ReadFile(Path(a))
	assert.Equal(t, string(remoteTasks(t, a).Raw()), string(local))
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
