package integrity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/record"
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
		if res := Check(project.Open(dir), "bench", nil); res.Tampered() {
			b.Fatal("tampered")
		}
	}
}

// The log check keeps what others append after the harness's own lines and
// catches anything that cuts or rewrites those lines, whatever the length.
func TestLogWhole(t *testing.T) {
	const mine = "[t] [SESSION-1] INIT Task added: Write alpha\n[t] [SESSION-1] CLAIM task-001\n"
	tests := []struct {
		name string
		live string
		want bool
	}{
		{"unchanged", mine, true},
		{"appended by the agent", mine + "[note] mine\n", true},
		{"truncated", mine[:10], false},
		{"emptied", "", false},
		{"rewritten, same length", strings.Replace(mine, "alpha", "omega", 1), false},
		{"rewritten, longer", strings.Replace(mine, "alpha", "nothing to do", 1), false},
		{"earlier line dropped, appends after", mine[strings.Index(mine, "\n")+1:] + strings.Repeat("x", 100), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("HARNESS_RECORD_DIR", filepath.Join(t.TempDir(), "records"))
			rec := record.Dir(dir)
			require.NoError(t, os.MkdirAll(rec, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(rec, record.LogMirror), []byte(mine), 0o600))
			require.NoError(t, os.WriteFile(progress.Path(dir), []byte(tt.live), 0o644))
			require.Equal(t, tt.want, logWhole(dir, record.Of(dir)))
		})
	}
}

// Without a mirror there is nothing to compare; without a log, it is gone.
func TestLogWholeMissing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HARNESS_RECORD_DIR", filepath.Join(t.TempDir(), "records"))
	require.True(t, logWhole(dir, record.Of(dir)))
	rec := record.Dir(dir)
	require.NoError(t, os.MkdirAll(rec, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(rec, record.LogMirror), []byte("a\n"), 0o600))
	require.False(t, logWhole(dir, record.Of(dir)))
}

// The same on a long log: the log check reads at most logTail bytes of the
// log and of the record's mirror, so it stays inside the budget.
func BenchmarkCheckUnchangedLongLog(b *testing.B) {
	dir := b.TempDir()
	b.Setenv("HARNESS_RECORD_DIR", filepath.Join(b.TempDir(), "records"))
	b.Setenv("HARNESS_LOCK_DIR", b.TempDir())
	require.NoError(b, state.Create(dir, time.Now()))
	require.NoError(b, os.WriteFile(filepath.Join(dir, ".harness-active"), nil, 0o644))
	var entries []progress.Entry
	for range 20000 {
		entries = append(entries, progress.Entry{Session: 1, Type: progress.Checkpoint, Message: "task-001 1/3 wrote the lexer's tokenizer and its tests"})
	}
	progress.Append(dir, entries...)
	_, err := state.Update(dir, func(s *state.State) error {
		s.AddTask(state.Task{ID: "task-001", Title: "x", Status: state.Pending, Priority: "P1", MaxAttempts: 3, Command: "true"})
		return nil
	})
	require.NoError(b, err)
	mi, err := os.Stat(filepath.Join(record.Dir(dir), record.LogMirror))
	require.NoError(b, err)
	require.Greater(b, mi.Size(), int64(logTail), "the mirror is longer than the tail compared")
	for b.Loop() {
		if res := Check(project.Open(dir), "bench", nil); res.Tampered() {
			b.Fatal("tampered")
		}
	}
}

// The changed copies kept of one harness file stop at maxKept, the newest
// kept; another file's copies and other files in the directory are left.
func TestKeepBoundsTheCopies(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, TamperedDir)
	require.NoError(t, os.MkdirAll(kept, 0o755))
	other := keep(dir, "paused", []byte("p"), true)
	require.NoError(t, os.WriteFile(filepath.Join(kept, "notes.txt"), []byte("mine"), 0o644))
	var last string
	for i := range maxKept + 10 {
		last = keep(dir, state.FileName, []byte{byte(i)}, true)
		require.NotEmpty(t, last)
	}
	names, err := os.ReadDir(kept)
	require.NoError(t, err)
	copies := 0
	for _, e := range names {
		if strings.HasPrefix(e.Name(), state.FileName+".") {
			copies++
		}
	}
	require.Equal(t, maxKept, copies)
	data, err := os.ReadFile(filepath.Join(dir, last))
	require.NoError(t, err)
	require.Equal(t, []byte{maxKept + 9}, data, "the newest copy is kept")
	require.FileExists(t, filepath.Join(dir, other))
	require.FileExists(t, filepath.Join(kept, "notes.txt"))
}
