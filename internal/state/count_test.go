package state

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

func TestBumpCount(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
		ok              bool
	}{
		{"at the end", `{"tasks": [], "session_count": 7, "last_session": null}`, `{"tasks": [], "session_count": 8, "last_session": null}`, true},
		{"last member", "{\r\n  \"tasks\": [],\r\n  \"session_count\" : 9\r\n}\r\n", "{\r\n  \"tasks\": [],\r\n  \"session_count\" : 10\r\n}\r\n", true},
		{"before the tasks", `{"session_count": 0, "tasks": [{"id": "a", "title": "x"}]}`, `{"session_count": 1, "tasks": [{"id": "a", "title": "x"}]}`, true},
		{"a title quoting it", `{"session_count": 1, "tasks": [{"title": "\"session_count\": 5"}]}`, `{"session_count": 2, "tasks": [{"title": "\"session_count\": 5"}]}`, true},
		{"a task's own member", `{"session_count": 1, "tasks": [{"id": "a", "session_count": 5}]}`, "", false},
		{"a string value", `{"tasks": [], "session_count": "3"}`, "", false},
		{"null", `{"tasks": [], "session_count": null}`, "", false},
		{"absent", `{"tasks": []}`, "", false},
		{"negative", `{"tasks": [], "session_count": -1}`, "", false},
		{"trailing junk", `{"tasks": [], "session_count": 1} x`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n, ok := bumpCount([]byte(tc.doc))
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, tc.want, string(got))
			assert.Equal(t, int(gjson.Get(tc.want, "session_count").Int()), n)
		})
	}
}

// TestCountSession: the count without a parse writes the file, its backup
// and nothing else, and refuses what accept refuses.
func TestCountSession(t *testing.T) {
	dir := writeState(t, sample)
	n, _, ok, err := CountSession(dir, func() bool { return false }, nil)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Zero(t, n)
	before, _ := os.ReadFile(Path(dir))
	assert.Equal(t, sample, string(before), "refused: untouched")

	var seen int
	n, doc, ok, err := CountSession(dir, func() bool { return true }, func(k int) { seen = k })
	require.NoError(t, err)
	require.True(t, ok)
	s, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, s.SessionCount, n)
	assert.Equal(t, n, seen)
	after, _ := os.ReadFile(Path(dir))
	assert.Equal(t, string(after), string(doc))
	bak, _ := os.ReadFile(BackupPath(dir))
	assert.Equal(t, string(after), string(bak), "the backup is the last state written")
	assert.Equal(t, strings.Count(sample, "\n"), strings.Count(string(after), "\n"), "one number changed, nothing else")
	assert.Equal(t, "task-001", ParseTask(after, "task-001").ID)
	assert.Nil(t, ParseTask(after, "task-404"))
}

func TestSetTopString(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
		ok              bool
	}{
		{"from null", `{"tasks": [], "last_session": null}`, `{"tasks": [], "last_session": "2026-01-02T03:04:05Z"}`, true},
		{"from a string", "{\r\n  \"last_session\" : \"x\\\"y\",\r\n  \"tasks\": []\r\n}", "{\r\n  \"last_session\" : \"2026-01-02T03:04:05Z\",\r\n  \"tasks\": []\r\n}", true},
		{"a task's own member", `{"last_session": null, "tasks": [{"last_session": null}]}`, "", false},
		{"a number", `{"tasks": [], "last_session": 5}`, "", false},
		{"absent", `{"tasks": []}`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := setTopString([]byte(tc.doc), "last_session", "2026-01-02T03:04:05Z")
			require.Equal(t, tc.ok, ok)
			if ok {
				assert.Equal(t, tc.want, string(got))
			}
		})
	}
}
