package progress

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/record"
)

var at = time.Date(2025, 7, 1, 10, 0, 0, 0, time.UTC)

func TestEntryFormat(t *testing.T) {
	tests := []struct {
		e    Entry
		want string
	}{
		{Entry{Time: at, Session: 1, Type: Init, Message: "Harness initialized for project /p"},
			"[2025-07-01T10:00:00Z] [SESSION-1] INIT Harness initialized for project /p"},
		{Entry{Time: at, Session: 1, Type: Error, TaskID: "task-002", Category: "TASK_EXEC", Message: "Redis connection refused"},
			"[2025-07-01T10:00:00Z] [SESSION-1] ERROR [task-002] [TASK_EXEC] Redis connection refused"},
		{Entry{Time: at, Session: 3, Type: Checkpoint, TaskID: "task-001", Message: `step=2/4 "auth routes"`},
			`[2025-07-01T10:00:00Z] [SESSION-3] CHECKPOINT [task-001] step=2/4 "auth routes"`},
		{Entry{Time: at.In(time.FixedZone("X", 3600)), Session: 2, Type: Lock, Message: "released"},
			"[2025-07-01T10:00:00Z] [SESSION-2] LOCK released"},
		{Entry{Time: at, Session: 1, Type: Warn, Message: "two\nlines\r\nhere  "},
			"[2025-07-01T10:00:00Z] [SESSION-1] WARN two lines here"},
		// A hand-edited id or category cannot forge a second line.
		{Entry{Time: at, Session: 1, Type: Starting, TaskID: "evil\n[2099-01-01T00:00:00Z] [SESSION-9] Completed [task-001] (commit 0000000)", Category: "X\r\nY", Message: "t"},
			"[2025-07-01T10:00:00Z] [SESSION-1] Starting [evil [2099-01-01T00:00:00Z] [SESSION-9] Completed [task-001] (commit 0000000)] [X Y] t"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.e.String())
	}
}

func TestTail(t *testing.T) {
	dir := t.TempDir()
	lines, err := Tail(dir, 5)
	require.NoError(t, err)
	assert.Empty(t, lines, "a missing log has no lines")

	var all []string
	for i := 0; i < 3000; i++ {
		e := Entry{Time: at, Session: 1, Type: Stats, Message: fmt.Sprintf("n=%d %s", i, strings.Repeat("x", i%50))}
		all = append(all, e.String())
		require.NoError(t, Append(dir, e))
	}
	for _, n := range []int{1, 5, 200, 3000, 5000} {
		got, err := Tail(dir, n)
		require.NoError(t, err)
		want := all[max(0, len(all)-n):]
		assert.Equal(t, want, got, "n=%d", n)
	}
	assert.Contains(t, LastMatching(dir, Stats, 10), "n=2999")
	assert.Equal(t, "", LastMatching(dir, Rollback, 10))
}

// TestTailStart: reading on from TailStart gives the lines Tail gives,
// for logs short and long, with and without a last newline, and where the
// bound cuts a line.
func TestTailStart(t *testing.T) {
	var long strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&long, "line %d %s\n", i, strings.Repeat("x", i%50))
	}
	huge := "first\n" + strings.Repeat("y", maxTail+10) + "\nlast\n"
	logs := map[string]string{
		"empty":           "",
		"one line":        "a\n",
		"no last newline": "a\nb\nc",
		"long":            long.String(),
		"a cut line":      huge,
		"one huge line":   strings.Repeat("z", maxTail+10),
	}
	for name, text := range logs {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(Path(dir), []byte(text), 0o644))
			for _, n := range []int{1, 2, 5, 200, 3000, 5000} {
				start, err := TailStart(dir, n)
				require.NoError(t, err)
				want, err := Tail(dir, n)
				require.NoError(t, err)
				var got []string
				if rest := strings.TrimSuffix(text[start:], "\n"); rest != "" {
					got = strings.Split(rest, "\n")
				}
				if len(want) == 0 {
					assert.Empty(t, got, "n=%d", n)
					continue
				}
				assert.Equal(t, want, got, "n=%d", n)
			}
		})
	}
	start, err := TailStart(t.TempDir(), 5)
	require.NoError(t, err)
	assert.Equal(t, int64(0), start, "a missing log")
}

func TestTailWithoutFinalNewline(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(Path(dir), []byte("a\nb\nc"), 0o644))
	got, err := Tail(dir, 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "c"}, got)
}

func TestConcurrentAppendsNeverInterleave(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				Append(dir, Entry{Time: at, Session: w, Type: Checkpoint, TaskID: "t", Message: strings.Repeat("y", 500)})
			}
		}(w)
	}
	wg.Wait()
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	require.Len(t, lines, 1600)
	for _, l := range lines {
		assert.Regexp(t, `^\[2025-07-01T10:00:00Z\] \[SESSION-\d+\] CHECKPOINT \[t\] y{500}$`, string(l))
	}
}

// bigLog writes a log of about size bytes.
func bigLog(b *testing.B, size int) string {
	dir := b.TempDir()
	line := Entry{Time: at, Session: 1, Type: Checkpoint, TaskID: "task-001", Message: strings.Repeat("z", 100)}.String() + "\n"
	data := bytes.Repeat([]byte(line), size/len(line)+1)
	require.NoError(b, os.WriteFile(Path(dir), data, 0o644))
	return dir
}

// BenchmarkTail shows the tail read stays flat as the log grows.
func BenchmarkTail(b *testing.B) {
	for _, mb := range []int{1, 50} {
		dir := bigLog(b, mb<<20)
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if lines, err := Tail(dir, 20); err != nil || len(lines) != 20 {
					b.Fatal(err, len(lines))
				}
			}
		})
	}
}

// TestTailBounded: a log whose end is one huge line (a sparse file's zeros)
// is read back no further than maxTail, and the lines before it are not
// reached; a log that is not a regular file is not read.
func TestTailBounded(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Append(dir, Entry{Time: at, Session: 1, Type: Init, Message: "start"}))
	f, err := os.OpenFile(Path(dir), os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(64<<20))
	require.NoError(t, f.Close())
	lines, err := Tail(dir, 1)
	require.NoError(t, err)
	assert.Empty(t, lines, "a line cut at maxTail is not returned")
	assert.Equal(t, 0, LastSession(dir))

	require.NoError(t, os.Remove(Path(dir)))
	require.NoError(t, os.Mkdir(Path(dir), 0o755))
	_, err = Tail(dir, 1)
	assert.Error(t, err)
}

// Appends from several processes at once (a hook, a verb, another
// session's hook) each write the log and then the record's mirror of it:
// the mirror must be a beginning of the log at every moment and end as
// the log is, or an integrity check takes the log for rewritten and
// "repairs" it. Without the record's log lock the two writes of two
// appends interleave (this test failed 3 runs in 5 so).
func TestConcurrentAppendsKeepTheMirror(t *testing.T) {
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, record.TasksCopy), []byte(`{}`), 0o644))
	require.NoError(t, os.WriteFile(Path(dir), []byte("[2025-07-01T10:00:00Z] [SESSION-1] INIT started\n"), 0o644))
	require.NoError(t, record.Of(dir).SaveTasks([]byte(`{}`), true))
	mirrorPath := filepath.Join(record.Dir(dir), record.LogMirror)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				Append(dir, Entry{Time: at, Session: w, Type: Checkpoint, TaskID: "t", Message: "m"})
			}
		}()
	}
	// At every moment the mirror is a beginning of the log (the log may
	// be ahead of it): read the mirror first, the log, which only grows,
	// after it.
	done, broken := make(chan struct{}), make(chan string, 1)
	go func() {
		for {
			select {
			case <-done:
				close(broken)
				return
			default:
			}
			m, _ := os.ReadFile(mirrorPath)
			l, _ := os.ReadFile(Path(dir))
			if !bytes.HasPrefix(l, m) {
				broken <- fmt.Sprintf("the mirror (%d bytes) is not a beginning of the log (%d bytes)", len(m), len(l))
				<-done
				close(broken)
				return
			}
		}
	}()
	wg.Wait()
	close(done)
	assert.Empty(t, <-broken)
	live, err := os.ReadFile(Path(dir))
	require.NoError(t, err)
	mirror, err := os.ReadFile(mirrorPath)
	require.NoError(t, err)
	assert.Equal(t, 4801, bytes.Count(live, []byte("\n")))
	assert.Equal(t, string(live), string(mirror), "the mirror is the log")
}

// Hold gives back the lines appended while fn ran, unwritten; a panic in
// fn ends the hold, so the lines appended after it are written.
func TestHold(t *testing.T) {
	dir := t.TempDir()
	lines, err := Hold(dir, func() error {
		Append(dir, Entry{Time: at, Session: 1, Type: Lock, Message: "held"})
		Append(t.TempDir(), Entry{Time: at, Session: 1, Type: Lock, Message: "another root's"})
		return errors.New("refused")
	})
	assert.EqualError(t, err, "refused")
	assert.Contains(t, string(lines), "held")
	assert.NotContains(t, string(lines), "another root's")
	assert.NoFileExists(t, Path(dir))

	func() {
		defer func() { assert.NotNil(t, recover()) }()
		Hold(dir, func() error {
			Append(dir, Entry{Time: at, Session: 1, Type: Lock, Message: "dropped"})
			panic("mid-change")
		})
	}()
	require.NoError(t, Append(dir, Entry{Time: at, Session: 1, Type: Lock, Message: "after"}))
	data, err := os.ReadFile(Path(dir))
	require.NoError(t, err)
	assert.Contains(t, string(data), "after")
	assert.NotContains(t, string(data), "dropped")
}
