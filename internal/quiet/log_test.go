package quiet_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/quiet"
)

// Each entry is one line of JSON that reads back as written, whatever its
// text holds.
func TestLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hooks.jsonl")
	t.Setenv("HARNESS_HOOK_LOG", path)
	odd := "a \"quoted\" \\ line\nand\ttab\x01\x1f <html> & \u2028 é \xff end"
	quiet.Log(quiet.Entry{Event: "PreToolUse", SessionID: "s1", Tool: "Bash", Decision: "deny", Reason: odd, Exit: 0, Took: 1500 * time.Microsecond})
	quiet.Log(quiet.Entry{Event: "Stop", Decision: "silent", Malformed: true, Exit: 2, Quiet: true, Context: "c", Warning: "w"})

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 2)
	var first, second map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first), lines[0])
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &second), lines[1])
	assert.Equal(t, strings.ReplaceAll(odd, "\xff", "\ufffd"), first["reason"])
	assert.Equal(t, map[string]any{"event": "PreToolUse", "session_id": "s1", "tool": "Bash", "decision": "deny", "exit": 0.0,
		"micros": 1500.0, "malformed": false, "context": "", "warning": ""},
		pick(first, "event", "session_id", "tool", "decision", "exit", "micros", "malformed", "context", "warning"))
	assert.NotContains(t, first, "quiet")
	assert.Equal(t, map[string]any{"event": "Stop", "malformed": true, "exit": 2.0, "quiet": true, "context": "c", "warning": "w"},
		pick(second, "event", "malformed", "exit", "quiet", "context", "warning"))
	assert.Equal(t, float64(os.Getpid()), second["pid"])
	stamp, err := time.Parse(time.RFC3339Nano, second["time"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), stamp, time.Minute)

	t.Setenv("HARNESS_HOOK_LOG", "")
	quiet.Log(quiet.Entry{Event: "Stop"})
	after, _ := os.ReadFile(path)
	assert.Equal(t, data, after, "written with the log unset")
}

func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}
