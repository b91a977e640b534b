package state

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/record"
)

// TestStaleTempsRemovedByTheNextWriter: the temporary files a writer killed
// half-way leaves (beside the tasks file and in the record) are removed by
// the next writer, whichever way it writes (a whole rewrite, a count or a
// timestamp patched in place, a restore); files of any other name stay.
func TestStaleTempsRemovedByTheNextWriter(t *testing.T) {
	stale := []string{
		".harness-tasks.json5577006791947779410", // renameio's, of the file
		".harness-tasks.json.bak.4242",           // atomicfile.Replace's, of the backup
		".harness-tasks.json.bak8674665223082153551",
		".harness-tasks.json.corrupt-20250701T100000Z6129484611666145821",
	}
	kept := []string{
		"harness-tasks.json.bak",
		"harness-tasks.json.corrupt-20250701T100000Z",
		".harness-tasks.json.notes",
		".harness-tasks.json.bak.",
		".harness-tasks.json.corrupt-now123",
		"x.harness-tasks.json123",
		".harness-progress.txt.4242",
	}
	writers := map[string]func(dir string) error{
		"update": func(dir string) error {
			_, err := Update(dir, func(s *State) error { s.Config.MaxSessions = 7; return nil })
			return err
		},
		"count in place": func(dir string) error {
			_, ok, err := CountSession(dir, func() bool { return true }, nil)
			assert.True(t, ok)
			return err
		},
		"last_session in place": func(dir string) error {
			ok, err := SetLastSession(dir, "2025-07-01T10:00:00Z", func() bool { return true }, nil)
			assert.True(t, ok)
			return err
		},
		"restore": func(dir string) error {
			data, err := os.ReadFile(Path(dir))
			require.NoError(t, err)
			return Restore(dir, data)
		},
	}
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(Path(dir), []byte(`{"version": 2, "tasks": [], "session_count": 1, "last_session": "2025-01-01T00:00:00Z"}`+"\n"), 0o644))
			_, err := Update(dir, func(*State) error { return nil }) // a record to clean too
			require.NoError(t, err)
			rd := record.Dir(dir)
			require.NoError(t, os.MkdirAll(rd, 0o700))
			for _, n := range append(append([]string{}, stale...), kept...) {
				require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644))
			}
			require.NoError(t, os.WriteFile(filepath.Join(rd, ".harness-tasks.json.31337"), []byte("x"), 0o600))

			require.NoError(t, write(dir))
			for _, n := range stale {
				assert.NoFileExists(t, filepath.Join(dir, n))
			}
			assert.NoFileExists(t, filepath.Join(rd, ".harness-tasks.json.31337"))
			for _, n := range kept {
				assert.FileExists(t, filepath.Join(dir, n))
			}
		})
	}
}
