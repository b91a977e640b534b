package trail

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/remote"
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

// trailOf writes the changes as the state ref's history, as fetched.
func trailOf(t *testing.T, changes ...string) string {
	dir := t.TempDir()
	out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput()
	require.NoError(t, err, "%s", out)
	parent := ""
	for i, tasks := range changes {
		doc := `{"version": 2, "tasks": [` + tasks + `], "session_count": 1}` + "\n"
		c, err := remote.Commit(dir, parent, map[string][]byte{remote.TasksFile: []byte(doc),
			remote.LogFile("m1"): []byte(strings.Repeat("[x] [SESSION-1] LOCK remote push of `harness claim` rejected\n", i))}, fmt.Sprintf("m1-w1: change %d", i))
		require.NoError(t, err)
		parent = c
	}
	out, err = exec.Command("git", "-C", dir, "update-ref", "refs/harness/remote/state", parent).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return dir
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
		t.Run(tt.name, func(t *testing.T) {
			r, err := Replay(trailOf(t, tt.changes...))
			require.NoError(t, err)
			require.Len(t, r.Steps, len(tt.changes))
			assert.Equal(t, "m1-w1: change 0", r.Steps[0].Subject)
			assert.Equal(t, map[string]int{"m1": len(tt.changes) - 1}, r.Rejected, "the lost races each machine's log holds")
			if tt.broken == "" {
				assert.Empty(t, r.Violations)
				return
			}
			require.Len(t, r.Violations, 1)
			assert.Contains(t, r.Violations[0], tt.broken)
		})
	}
}
