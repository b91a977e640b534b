package budget

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/record"
)

// endedJob makes a job of n sessions in a project of its own, each with an
// account 10 minutes and 100 tokens long, and returns its record and its
// sessions' directory.
func endedJob(t *testing.T, n int) (rec record.Record, sd string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HARNESS_RECORD_DIR", filepath.Join(t.TempDir(), "records"))
	at := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	for i := range n {
		s := &Session{SessionID: "s" + itoa(i), Session: i + 1, StartedAt: at, LastSeen: at.Add(10 * time.Minute), Tokens: 100}
		require.NoError(t, s.save(record.Of(dir)))
	}
	return record.Of(dir), record.Of(dir).SessionsDir()
}

// A session's end moves its account among the ended sessions' and into
// their sum; the job's total is the same, and it is read from the sum, not
// the files: an ended file changed afterwards does not move it.
func TestEndKeepsTheTotalInOneSum(t *testing.T) {
	rec, sd := endedJob(t, 5)
	want := Total(rec, nil)
	require.Equal(t, 5, want.Sessions)
	for _, id := range []string{"s0", "s1", "s2"} {
		End(rec, id)
	}
	assert.NoFileExists(t, Path(rec, "s0"))
	assert.FileExists(t, filepath.Join(sd, endedDir, filepath.Base(Path(rec, "s0"))))
	assert.Equal(t, want, Total(rec, nil))

	s := &Session{SessionID: "s0", Tokens: 999999}
	require.NoError(t, os.WriteFile(filepath.Join(sd, endedDir, filepath.Base(Path(rec, "s0"))), s.encode(), 0o600))
	assert.Equal(t, want, Total(rec, nil), "the kept sum counts, not the file")
}

// A move cut short (the sum written, the rename failed or never made: a
// crash) is taken off by the sum's next reader, and by the next move; a
// sum gone or garbled is made again from the files. Nothing is counted
// twice or lost.
func TestEndedSumAfterACrash(t *testing.T) {
	tests := []struct {
		name  string
		crash func(t *testing.T, rec record.Record, sd string)
	}{
		{"an end cut short before its move", func(t *testing.T, rec record.Record, sd string) {
			failRenames(t)
			End(rec, "s3")
			require.FileExists(t, Path(rec, "s3"))
		}},
		{"a reopen cut short before its move", func(t *testing.T, rec record.Record, sd string) {
			failRenames(t)
			require.False(t, reopen(rec, "s0"))
			require.NoFileExists(t, Path(rec, "s0"))
		}},
		{"the sum removed", func(t *testing.T, rec record.Record, sd string) {
			require.NoError(t, os.Remove(filepath.Join(sd, endedSum)))
		}},
		{"the sum garbled", func(t *testing.T, rec record.Record, sd string) {
			require.NoError(t, os.WriteFile(filepath.Join(sd, endedSum), []byte("{\"sessions\": "), 0o600))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, sd := endedJob(t, 5)
			want := Total(rec, nil)
			End(rec, "s0")
			End(rec, "s1")
			tt.crash(t, rec, sd)
			rename = os.Rename
			assert.Equal(t, want, Total(rec, nil))
			End(rec, "s2")
			End(rec, "s4")
			assert.Equal(t, want, Total(rec, nil))
			End(rec, "s3")
			assert.Equal(t, want, Total(rec, nil))
			assert.Equal(t, want, recount(sd).job, "the sum is the files'")
		})
	}
}

// failRenames makes every move fail until the test ends.
func failRenames(t *testing.T) {
	rename = func(string, string) error { return os.ErrPermission }
	t.Cleanup(func() { rename = os.Rename })
}

// A session that starts again with the id of one that ended (a resume)
// goes on with its account: its clock and tokens, counted once.
func TestResumeReopensTheEndedAccount(t *testing.T) {
	rec, sd := endedJob(t, 3)
	want := Total(rec, nil)
	End(rec, "s1")
	s := Start(rec, "s1", 9, "", time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	assert.Equal(t, 2, s.Session, "the account the session had")
	assert.Equal(t, int64(100), s.Tokens)
	assert.FileExists(t, Path(rec, "s1"))
	assert.Equal(t, Job{}, endedIn(sd).job)
	assert.Equal(t, want, Total(rec, nil))
}

// The same id ended twice without a start between (a Stop made it a new
// account): both accounts count.
func TestEndedTwiceCountsBoth(t *testing.T) {
	rec, sd := endedJob(t, 2)
	End(rec, "s0")
	s := &Session{SessionID: "s0", Session: 3, Tokens: 50}
	require.NoError(t, s.save(rec))
	End(rec, "s0")
	entries, err := os.ReadDir(filepath.Join(sd, endedDir))
	require.NoError(t, err)
	assert.Len(t, entries, 2)
	assert.Equal(t, int64(250), Total(rec, nil).Tokens)
	Reset(rec)
	assert.Equal(t, Job{}, Total(rec, nil))
	assert.NoDirExists(t, filepath.Join(sd, endedDir))
}

// A job's total with a job budget, at every turn end: with the ended
// sessions in their sum it reads one file and the live accounts, whatever
// the job's length.
func BenchmarkTotalLongJob(b *testing.B) {
	for _, ended := range []bool{false, true} {
		name := "files"
		if ended {
			name = "ended-sum"
		}
		b.Run(name, func(b *testing.B) {
			b.Setenv("HARNESS_RECORD_DIR", filepath.Join(b.TempDir(), "records"))
			rec := record.Of(b.TempDir())
			at := time.Now()
			for i := range 1000 {
				s := &Session{SessionID: "s" + itoa(i), Session: i + 1, StartedAt: at, LastSeen: at.Add(time.Minute)}
				require.NoError(b, s.save(rec))
				if ended {
					End(rec, s.SessionID)
				}
			}
			for b.Loop() {
				if Total(rec, nil).Sessions != 1000 {
					b.Fatal("lost a session")
				}
			}
		})
	}
}

// A session killed before its end hook ran leaves its account live; the
// daily look through the sessions' directory ends it once it is idle for
// the runtime files' TTL, the totals unchanged.
func TestEndStaleEndsTheAccountsOfKilledSessions(t *testing.T) {
	rec, sd := endedJob(t, 3)
	want := Total(rec, nil)
	old := time.Now().Add(-8 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(Path(rec, "s0"), old, old))
	EndStale(rec, time.Now(), 7*24*time.Hour)
	assert.NoFileExists(t, Path(rec, "s0"))
	assert.FileExists(t, Path(rec, "s1"), "seen within the week")
	assert.Equal(t, want, Total(rec, nil))
	assert.Equal(t, int64(100), recount(sd).job.Tokens, "s0 is among the ended")
}

// A total read while sessions end (another session's Stop, in concurrent
// mode) counts each account once: never one moved between its two reads.
func TestTotalWhileSessionsEnd(t *testing.T) {
	rec, _ := endedJob(t, 200)
	want := Total(rec, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			End(rec, "s"+itoa(i))
		}
	}()
	for {
		select {
		case <-done:
			assert.Equal(t, want, Total(rec, nil))
			return
		default:
			require.Equal(t, want, Total(rec, nil))
		}
	}
}
