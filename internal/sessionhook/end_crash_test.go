package sessionhook

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/testbin"
)

// Real SessionEnd processes, killed with SIGKILL at random points while
// they move their sessions' budget accounts among the ended ones, never
// change the job's total: a move cut short is taken off by the sum's next
// reader, and the account is moved by the next end.
func TestSIGKILLDuringSessionEndsKeepsTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("hundreds of processes killed, a few seconds; skipped with -short")
	}
	dir := t.TempDir()
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "harness-tasks.json"), []byte(`{"version":2,"tasks":[{"id":"t1","status":"pending","validation":{"command":"true"}}],"session_count":0}`), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".locks"), 0o755))
	rec := record.Of(dir)
	at := time.Now().Add(-24 * time.Hour)
	const n = 200
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%03d", i)
		budget.Start(rec, ids[i], i+1, "", at)
		budget.Observe(rec, ids[i], i+1, "", at.Add(time.Duration(i+1)*time.Minute))
	}
	want := budget.Total(rec, nil)
	require.Equal(t, n, want.Sessions)

	end := func(id string) *exec.Cmd {
		cmd := exec.Command(os.Args[0])
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader([]byte(`{"session_id":"` + id + `","hook_event_name":"SessionEnd","reason":"other"}`))
		cmd.Env = append(os.Environ(), "HARNESS_TEST_PROGRAM=harness-session-end", "HOME="+dir,
			"HARNESS_LOCK_DIR="+filepath.Join(dir, ".locks"), "CLAUDE_PROJECT_DIR="+dir, "CLAUDE_CODE_SESSION_ID="+id)
		return cmd
	}
	killer := testbin.NewKiller(t, func(i int) *exec.Cmd { return end(ids[i]) })
	kills, ended := 0, 5
	for i, id := range ids[5:] {
		killed, err := killer.Run(end(id))
		require.NoError(t, err, "SessionEnd of %s failed on its own", id)
		if killed {
			kills++
		} else {
			ended++
		}
		require.Equal(t, want, budget.Total(rec, nil), "the job's total after round %d (%d kills)", i+1, kills)
	}
	t.Logf("%d ends completed, %d killed mid-run (final kill window %s)", ended, kills, killer.Span)
	assert.GreaterOrEqual(t, kills, 20)

	// Every session ended again, nothing killed: all accounts are among the
	// ended, and their sum is what the files add up to.
	for _, id := range ids {
		out, err := end(id).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	live, _ := filepath.Glob(filepath.Join(rec.SessionsDir(), "usage-*.json"))
	assert.Empty(t, live, "accounts not moved")
	assert.Equal(t, want, budget.Total(rec, nil))
	require.NoError(t, os.Remove(filepath.Join(rec.SessionsDir(), "ended-sum.json")))
	assert.Equal(t, want, budget.Total(rec, nil), "the sum is the files'")
}
