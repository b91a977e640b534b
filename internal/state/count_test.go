package state

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/record"
)

func TestCountValue(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
		ok              bool
	}{
		{"at the end", `{"tasks": [], "session_count": 7, "last_session": null}`, `{"tasks": [], "session_count": 8, "last_session": null}`, true},
		{"last member", "{\r\n  \"tasks\": [],\r\n  \"session_count\" : 9\r\n}\r\n", "{\r\n  \"tasks\": [],\r\n  \"session_count\" : 10\r\n}\r\n", true},
		{"before the tasks", `{"session_count": 0, "tasks": [{"id": "a", "title": "x"}]}`, `{"session_count": 1, "tasks": [{"id": "a", "title": "x"}]}`, true},
		{"a title quoting it", `{"session_count": 1, "tasks": [{"title": "\"session_count\": 5"}]}`, `{"session_count": 2, "tasks": [{"title": "\"session_count\": 5"}]}`, true},
		{"a task's own member too", `{"session_count": 1, "tasks": [{"id": "a", "session_count": 5}]}`, `{"session_count": 2, "tasks": [{"id": "a", "session_count": 5}]}`, true},
		{"a string value", `{"tasks": [], "session_count": "3"}`, "", false},
		{"null", `{"tasks": [], "session_count": null}`, "", false},
		{"absent", `{"tasks": []}`, "", false},
		{"negative", `{"tasks": [], "session_count": -1}`, "", false},
		{"trailing junk", `{"tasks": [], "session_count": 1} x`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n int
			got, ok := spliceTop([]byte(tc.doc), "session_count", func(old []byte) ([]byte, bool) {
				var ok bool
				n, ok = nextCount(old)
				return []byte(strconv.Itoa(n)), ok
			})
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
	n, ok, err := CountSession(dir, func() bool { return false }, nil)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Zero(t, n)
	before, _ := os.ReadFile(Path(dir))
	assert.Equal(t, sample, string(before), "refused: untouched")

	var seen int
	n, ok, err = CountSession(dir, func() bool { return true }, func(k int) { seen = k })
	require.NoError(t, err)
	require.True(t, ok)
	s, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, s.SessionCount, n)
	assert.Equal(t, n, seen)
	after, _ := os.ReadFile(Path(dir))
	bak, _ := os.ReadFile(BackupPath(dir))
	assert.Equal(t, string(after), string(bak), "the backup is the last state written")
	assert.Equal(t, strings.Count(sample, "\n"), strings.Count(string(after), "\n"), "one number changed, nothing else")
	assert.Equal(t, "task-001", ParseTask(after, "task-001").ID)
	assert.Nil(t, ParseTask(after, "task-404"))
}

// TestEditTopInPlace: a count or a timestamp of the old one's length is
// written over it in the file, its backup and the record's copy (the file
// keeps its inode; every copy equals the file; the record's mark follows
// it), and anything else is a whole rewrite: a count that gains a digit, a
// value across a sector boundary, a member outside the tail read first.
func TestEditTopInPlace(t *testing.T) {
	pad := func(n int) string { return `"x-pad": "` + strings.Repeat("p", n) + `",` }
	for _, tc := range []struct {
		name    string
		doc     string
		edit    func(dir string) (bool, error)
		want    string // the member's value after the edit
		inPlace bool
	}{
		{"count, same width", `{"tasks": [], "session_count": 41, "last_session": null}`, count, "42", true},
		{"count gains a digit", `{"tasks": [], "session_count": 9, "last_session": null}`, count, "10", false},
		{"timestamp over timestamp", `{"tasks": [], "session_count": 1, "last_session": "2025-01-01T00:00:00Z"}`, lastSession, `"2026-01-02T03:04:05Z"`, true},
		{"timestamp over null", `{"tasks": [], "session_count": 1, "last_session": null}`, lastSession, `"2026-01-02T03:04:05Z"`, false},
		// `{"x-pad": "` is 11 bytes, `",` 2, `"session_count":` 16: the
		// value is at 511 and 512.
		{"across a sector", `{` + pad(482) + `"session_count":40, "tasks": []}`, count, "41", false},
		{"in the head", `{"session_count": 41, ` + pad(2*tailSize) + ` "tasks": []}`, count, "42", true},
		{"in the middle", `{` + pad(2*tailSize) + `"session_count": 41, ` + pad(2*tailSize) + ` "tasks": []}`, count, "42", true},
		{"in the last 64 KiB, past the last page", `{` + pad(2*tailSize) + `"session_count": 41, ` + pad(10<<10) + ` "tasks": []}`, count, "42", true},
		{"in the first 64 KiB, past the first page", `{` + pad(10<<10) + `"session_count": 41, ` + pad(2*tailSize) + ` "tasks": []}`, count, "42", true},
		{"in the head, a task's own member last", `{"session_count": 41, ` + pad(2*tailSize) + ` "tasks": [{"session_count": 3}]}`, count, "42", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeState(t, tc.doc)
			// A first write through the harness gives the backup and
			// the record their copies, as a real project has.
			require.NoError(t, writeEdited(dir, []byte(tc.doc)))
			before, err := os.Stat(Path(dir))
			require.NoError(t, err)

			ok, err := tc.edit(dir)
			require.NoError(t, err)
			require.True(t, ok)

			after, err := os.Stat(Path(dir))
			require.NoError(t, err)
			assert.Equal(t, tc.inPlace, os.SameFile(before, after), "in place")
			doc, _ := os.ReadFile(Path(dir))
			name := "session_count"
			if strings.Contains(tc.want, "T") {
				name = "last_session"
			}
			assert.Equal(t, tc.want, gjson.GetBytes(doc, name).Raw)
			bak, _ := os.ReadFile(BackupPath(dir))
			assert.Equal(t, string(doc), string(bak), "the backup is the file")
			copied, _ := os.ReadFile(filepath.Join(record.Dir(dir), record.TasksCopy))
			assert.Equal(t, string(doc), string(copied), "the record's copy is the file")
			m, ok := record.Of(dir).Mark()
			require.True(t, ok)
			assert.Equal(t, after.Size(), m.Size)
			assert.Equal(t, after.ModTime().UnixNano(), m.ModNs, "the mark follows the file")
		})
	}
}

func count(dir string) (bool, error) {
	_, ok, err := CountSession(dir, func() bool { return true }, nil)
	return ok, err
}

func lastSession(dir string) (bool, error) {
	return SetLastSession(dir, "2026-01-02T03:04:05Z", func() bool { return true }, nil)
}

// TestPatchedCopyDiffers: a backup or record copy that does not hold the
// old bytes where the edit is (written by something else) is not patched
// but written whole from the file.
func TestPatchedCopyDiffers(t *testing.T) {
	doc := `{"tasks": [], "session_count": 41}`
	dir := writeState(t, doc)
	require.NoError(t, writeEdited(dir, []byte(doc)))
	require.NoError(t, os.WriteFile(BackupPath(dir), []byte(`{"tasks": [], "session_count": 17}`), 0o644))
	ok, err := count(dir)
	require.NoError(t, err)
	require.True(t, ok)
	bak, _ := os.ReadFile(BackupPath(dir))
	assert.Equal(t, `{"tasks": [], "session_count": 42}`, string(bak))

	// A backup an interrupted write left behind holds the old bytes at the
	// same place but is another file: patching it would make a mix of
	// the two, so it is written whole.
	require.NoError(t, os.WriteFile(BackupPath(dir), []byte(`{"tasks": [], "session_count": 42, "x": 1}`), 0o644))
	ok, err = count(dir)
	require.NoError(t, err)
	require.True(t, ok)
	bak, _ = os.ReadFile(BackupPath(dir))
	assert.Equal(t, `{"tasks": [], "session_count": 43}`, string(bak))
}

func TestLastSessionValue(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
		ok              bool
	}{
		{"from null", `{"tasks": [], "last_session": null}`, `{"tasks": [], "last_session": "2026-01-02T03:04:05Z"}`, true},
		{"from a string", "{\r\n  \"last_session\" : \"x\\\"y\",\r\n  \"tasks\": []\r\n}", "{\r\n  \"last_session\" : \"2026-01-02T03:04:05Z\",\r\n  \"tasks\": []\r\n}", true},
		{"a task's own member too", `{"last_session": null, "tasks": [{"last_session": null}]}`, `{"last_session": "2026-01-02T03:04:05Z", "tasks": [{"last_session": null}]}`, true},
		{"a number", `{"tasks": [], "last_session": 5}`, "", false},
		{"absent", `{"tasks": []}`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := spliceTop([]byte(tc.doc), "last_session", func(old []byte) ([]byte, bool) {
				return stringValue(old, "2026-01-02T03:04:05Z")
			})
			require.Equal(t, tc.ok, ok)
			if ok {
				assert.Equal(t, tc.want, string(got))
			}
		})
	}
}
