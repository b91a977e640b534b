package state

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOneSpan(t *testing.T) {
	long := strings.Repeat("x", 600)
	for _, tc := range []struct {
		name, doc, edited string
		at                int64
		old, nv           string
		ok                bool
	}{
		{"one digit", `{"n": 41}`, `{"n": 42}`, 7, "1", "2", true},
		{"two changes, one sector", `{"n": 19, "t": "a"}`, `{"n": 20, "t": "b"}`, 6, `19, "t": "a`, `20, "t": "b`, true},
		{"identical", `{"n": 1}`, `{"n": 1}`, 0, "", "", false},
		{"longer", `{"n": 9}`, `{"n": 10}`, 0, "", "", false},
		{"two sectors apart", `{"a": 1, "p": "` + long + `", "b": 1}`, `{"a": 2, "p": "` + long + `", "b": 2}`, 0, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, old, nv, ok := oneSpan([]byte(tc.doc), []byte(tc.edited))
			require.Equal(t, tc.ok, ok)
			if ok {
				assert.Equal(t, tc.at, at)
				assert.Equal(t, tc.old, string(old))
				assert.Equal(t, tc.nv, string(nv))
			}
		})
	}
}

// TestSaveInPlace: a write through Update whose change is one small run of
// bytes (the session count) patches the file where it is; a change to a
// task rewrites it (a new file renamed into place). Either way the file,
// its backup and what Load reads agree.
func TestSaveInPlace(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(*State)
		inPlace bool
	}{
		{"count", func(s *State) { s.SessionCount++ }, true},
		{"a task", func(s *State) { s.Task("task-001").Title = "changed" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeState(t, sample)
			_, err := Update(dir, func(s *State) error { s.SessionCount = 10; return nil }) // a first write: the backup exists
			require.NoError(t, err)
			before, err := os.Stat(Path(dir))
			require.NoError(t, err)
			_, err = Update(dir, func(s *State) error { tc.change(s); return nil })
			require.NoError(t, err)
			after, err := os.Stat(Path(dir))
			require.NoError(t, err)
			assert.Equal(t, tc.inPlace, os.SameFile(before, after), "in place")
			doc, _ := os.ReadFile(Path(dir))
			bak, _ := os.ReadFile(BackupPath(dir))
			assert.Equal(t, string(doc), string(bak))
			s, err := Load(dir)
			require.NoError(t, err)
			if tc.inPlace {
				assert.Equal(t, 11, s.SessionCount)
			} else {
				assert.Equal(t, "changed", s.Task("task-001").Title)
			}
		})
	}
}
