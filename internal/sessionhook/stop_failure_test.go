package sessionhook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/apierror"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/lock"
)

// TestSessionEndWaitsForStopFailure: Claude Code does not wait for the
// StopFailure hook, so the session's end can run while it is still at work.
// SessionEnd waits for its turn (lock.APIError); it records nothing when
// StopFailure finished (the record, written after the line, says so), and
// records the error itself when StopFailure was killed half-way.
func TestSessionEndWaitsForStopFailure(t *testing.T) {
	for _, tc := range []struct {
		name         string
		stopFailure  bool // StopFailure did its work before it let go
		wantAPIError int
	}{
		{"StopFailure done", true, 1},
		{"StopFailure killed half-way", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testProject(t, tasksJSON(1, "", task("task-001", "pending")))
			transcript := filepath.Join(t.TempDir(), "transcript.jsonl")
			require.NoError(t, os.WriteFile(transcript, []byte(
				`{"type":"assistant","message":{"role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error: Request rejected (429) · Retry after 60 seconds."}]},"error":"rate_limit","isApiErrorMessage":true}`+"\n"), 0o644))
			end := payload(t, hook.SessionEnd, "reason", "other", "transcript_path", transcript)

			unlock, err := lock.APIError(dir, time.Second)
			require.NoError(t, err)
			ended := make(chan struct{})
			go func() {
				SessionEnd(end)
				close(ended)
			}()
			time.Sleep(300 * time.Millisecond)
			assert.NotContains(t, strings.Join(logLines(t, dir), "\n"), "API_ERROR", "SessionEnd recorded the error while StopFailure held its turn")
			if tc.stopFailure {
				appendLog(t, dir, "[2026-11-27T00:00:00Z] [SESSION-1] API_ERROR [RATE_LIMIT] turn ended on an API error")
				require.NoError(t, apierror.Write(dir, apierror.Record{Time: time.Now().UTC().Format(time.RFC3339), SessionID: sessionID, Session: 1, Kind: "rate_limit"}))
			}
			unlock()
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
				t.Fatal("SessionEnd did not return")
			}
			assert.Equal(t, tc.wantAPIError, strings.Count(strings.Join(logLines(t, dir), "\n"), "API_ERROR"))
			assert.NotNil(t, apierror.Read(dir), "no API error record")
		})
	}
}
