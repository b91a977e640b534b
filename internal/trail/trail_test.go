package trail

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/remote"
	"github.com/harness-agent/harness/internal/state"
)

// task is one task of a tasks file in a change of the trail.
func task(id, status, holder, lease string, gen int, integrated string) string {
	t := fmt.Sprintf(`{"id": %q, "title": "T", "status": %q, "validation": {"command": "true"}, "claim_generation": %d`, id, status, gen)
	if holder != "" {
		t += fmt.Sprintf(`, "claimed_by": %q, "lease_expires_at": %q`, holder, lease)
	}
	if integrated != "" {
		t += fmt.Sprintf(`, "integrated_commit": %q`, integrated)
	}
	return t + "}"
}

// trailOf writes the changes, as fetched: with onRefs, the first as the
// state ref's and the others on the ref of the one task they hold, as a
// job with task refs makes them; else all as the state ref's history, as
// a job shared before task refs made them.
func trailOf(t *testing.T, onRefs bool, changes ...string) string {
	dir := t.TempDir()
	out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput()
	require.NoError(t, err, "%s", out)
	parent, taskParent := "", ""
	for i, tasks := range changes {
		message := fmt.Sprintf("m1-w1: change %d", i)
		// A second apart: the trail orders the refs' changes by time.
		if onRefs && i > 0 {
			taskParent = commitAt(t, dir, i, taskParent, remote.TaskFile, tasks+"\n", message)
			continue
		}
		doc := `{"version": 2, "tasks": [` + tasks + `], "session_count": 1}` + "\n"
		parent = commitAt(t, dir, i, parent, remote.TasksFile, doc, message)
	}
	log := strings.Repeat("[x] [SESSION-1] LOCK remote push of `harness claim` rejected\n", len(changes)-1)
	machine, err := remote.Commit(dir, "", map[string][]byte{remote.LogFile("m1"): []byte(log)}, "m1: log")
	require.NoError(t, err)
	for ref, c := range map[string]string{"refs/harness/remote/state": parent, "refs/harness/remote/harness/tasks/t1": taskParent,
		"refs/harness/remote/harness/machines/m1": machine} {
		if c != "" {
			out, err = exec.Command("git", "-C", dir, "update-ref", ref, c).CombinedOutput()
			require.NoError(t, err, "%s", out)
		}
	}
	return dir
}

// commitAt writes a commit on parent whose tree holds name alone, made at
// second i of the trail.
func commitAt(t *testing.T, dir string, i int, parent, name, data, message string) string {
	blob, err := git.Cmd{Dir: dir, Stdin: []byte(data)}.Run("hash-object", "-w", "--stdin")
	require.NoError(t, err)
	tree, err := git.Cmd{Dir: dir, Stdin: []byte("100644 blob " + blob + "\t" + name + "\n")}.Run("mktree")
	require.NoError(t, err)
	args := []string{"commit-tree", tree, "-m", message}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	c, err := git.Cmd{Dir: dir, Env: []string{"GIT_COMMITTER_DATE=" + fmt.Sprint(2000000000+i),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost"}}.Run(args...)
	require.NoError(t, err)
	return c
}

func TestReplay(t *testing.T) {
	const (
		past   = "2000-01-01T00:00:00Z"
		future = "2999-01-01T00:00:00Z"
	)
	tests := []struct {
		name    string
		changes []string
		broken  string // a violation's text, "" for none
	}{
		{"a claim, then another holder once its lease ran out", []string{
			task("t1", "pending", "", "", 0, ""),
			task("t1", "in_progress", "m1-w1", past, 1, ""),
			task("t1", "in_progress", "m2-w1", future, 2, ""),
		}, ""},
		{"a second holder while the first one's lease runs", []string{
			task("t1", "pending", "", "", 0, ""),
			task("t1", "in_progress", "m1-w1", future, 1, ""),
			task("t1", "in_progress", "m2-w1", future, 2, ""),
		}, "t1 claimed by m2-w1 while m1-w1 held it (lease until " + future + ")"},
		{"a new holder without a new generation", []string{
			task("t1", "pending", "", "", 0, ""),
			task("t1", "in_progress", "m1-w1", past, 1, ""),
			task("t1", "in_progress", "m2-w1", future, 1, ""),
		}, "t1 claimed by m2-w1 without a new generation (1, was 1)"},
		{"integrated twice", []string{
			task("t1", "pending", "", "", 0, ""),
			task("t1", "completed", "", "", 1, "aaaaaaa"),
			task("t1", "completed", "", "", 1, "bbbbbbb"),
		}, "t1 integrated a second time (aaaaaaa, then bbbbbbb)"},
	}
	for _, tt := range tests {
		for _, onRefs := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/task refs %v", tt.name, onRefs), func(t *testing.T) {
				dir := trailOf(t, onRefs, tt.changes...)
				r, err := Replay(dir)
				require.NoError(t, err)
				require.Len(t, r.Steps, len(tt.changes))
				for i, s := range r.Steps {
					assert.Equal(t, fmt.Sprintf("m1-w1: change %d", i), s.Subject, "in the order they were made")
				}
				if onRefs {
					assert.Equal(t, remote.TaskRef("t1"), r.Steps[1].Ref)
					assert.Equal(t, 1, r.TaskRefs)
				}
				assert.Equal(t, map[string]int{"m1": len(tt.changes) - 1}, r.Rejected, "the lost races each machine's log holds")
				if tt.broken == "" {
					assert.Empty(t, r.Violations)
					assert.Contains(t, r.Steps[1].Events, "t1 claimed by m1-w1 (generation 1)")
					final, err := state.Parse(r.Final, "final")
					require.NoError(t, err)
					last := tt.changes[len(tt.changes)-1]
					assert.Equal(t, state.ParseEntry([]byte(last), "t1").ClaimedBy, final.Task("t1").ClaimedBy, "the refs make the last change")
					return
				}
				require.Len(t, r.Violations, 1)
				assert.Contains(t, r.Violations[0], tt.broken)
			})
		}
	}
}
