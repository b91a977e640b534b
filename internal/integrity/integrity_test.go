package integrity

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/state"
)

// The check every hook and verb runs when nothing changed: a stat of the
// tasks file, the marker and the log, and a read of the record's mark. Its
// budget is 0.2 ms in process (docs/perf.md).
func BenchmarkCheckUnchanged(b *testing.B) {
	dir := b.TempDir()
	b.Setenv("HARNESS_RECORD_DIR", filepath.Join(b.TempDir(), "records"))
	b.Setenv("HARNESS_LOCK_DIR", b.TempDir())
	require.NoError(b, state.Create(dir, time.Now()))
	require.NoError(b, os.WriteFile(filepath.Join(dir, ".harness-active"), nil, 0o644))
	_, err := state.Update(dir, func(s *state.State) error {
		for i := range 1000 {
			s.AddTask(state.Task{ID: "t" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676)), Title: "x", Status: state.Pending, Priority: "P1", MaxAttempts: 3, Command: "true"})
		}
		return nil
	})
	require.NoError(b, err)
	for b.Loop() {
		if res := Check(dir, "bench", nil); res.Tampered() {
			b.Fatal("tampered")
		}
	}
}
