// Package progress writes and reads harness-progress.txt, the append-only log
// that carries the story of a long job across sessions. Every entry is one
// grep-able line:
//
//	[2025-07-01T10:00:00Z] [SESSION-1] TYPE [task-id]? [CATEGORY]? message
//
// Appends are single O_APPEND writes, so concurrent writers never interleave
// within a line, and Tail reads backwards from the end, so its cost does not
// grow with the log.
package progress

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
)

// FileName is the log's name inside the state root.
const FileName = root.ProgressFile

// The entry types of the protocol.
const (
	Init       = "INIT"
	Starting   = "Starting"
	Completed  = "Completed"
	Error      = "ERROR"
	Checkpoint = "CHECKPOINT"
	Rollback   = "ROLLBACK"
	Recovery   = "RECOVERY"
	Stats      = "STATS"
	Lock       = "LOCK"
	Warn       = "WARN"
	Tamper     = "TAMPER"
	// Stop says why a session was let stop although work remains: a
	// budget ran out, or the session was stuck.
	Stop = "STOP"
	// Compact records a compaction and the resume card kept for it.
	Compact = "COMPACT"
	// APIError records a turn that ended on an API error (rate limit,
	// overload, …).
	APIError = "API_ERROR"
	// Retry records a task failed for good that a person reopened.
	Retry = "RETRY"
	// Person records a person-only action (adopt, cancel, remove, …) and
	// how it was invoked: by a terminal or not, and what the check of its
	// process tree saw.
	Person = "PERSON"
	// Merge records the merge queue's steps: a task queued after its
	// validation passed in a worker's tree, and integrated.
	Merge = "MERGE"
	// Worker records a supervisor's (`harness workers`) workers starting,
	// ending and being stopped.
	Worker = "WORKER"
	// Review records the reviewer's verdict on a task whose validation
	// passed: PASS, FAIL or NONE (no verdict), with its reasons and cost.
	Review = "REVIEW"
)

// Entry is one log line.
type Entry struct {
	Time     time.Time // zero means now
	Session  int
	Type     string
	TaskID   string // optional
	Category string // optional
	Message  string
}

// String renders the entry in the protocol's format, always on one line.
func (e Entry) String() string {
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] [SESSION-%d] %s", t.UTC().Format(time.RFC3339), e.Session, e.Type)
	// A task id comes from a hand-editable file: folded like the message,
	// it cannot start a forged line either.
	if e.TaskID != "" {
		fmt.Fprintf(&b, " [%s]", OneLine(e.TaskID))
	}
	if e.Category != "" {
		fmt.Fprintf(&b, " [%s]", OneLine(e.Category))
	}
	if e.Message != "" {
		b.WriteByte(' ')
		b.WriteString(OneLine(e.Message))
	}
	return b.String()
}

// OneLine folds s onto a single line so it cannot forge or split log entries.
func OneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(strings.NewReplacer("\r", " ", "\n", " ").Replace(s)), " ")
}

// Path returns the log's path in the state root dir.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// capture holds the lines appended to one state root's log while a change
// of its state is being made (internal/state, Hold): they are written once
// the tasks file is (a job shared through a remote: once the change is
// published), so the log never says what the state does not.
var capture struct {
	sync.Mutex
	dir string
	buf *bytes.Buffer
}

// Hold runs fn holding back every line appended to dir's log meanwhile,
// and returns them for the caller to append once its change is written. One
// hold at a time per process (the transaction lock serialises the changes
// that hold). A panic in fn ends the hold and drops its lines: the rest of
// the process's lines are not held back with them.
func Hold(dir string, fn func() error) (lines []byte, err error) {
	capture.Lock()
	capture.dir, capture.buf = dir, &bytes.Buffer{}
	capture.Unlock()
	defer func() {
		capture.Lock()
		if capture.buf != nil {
			lines = capture.buf.Bytes()
		}
		capture.dir, capture.buf = "", nil
		capture.Unlock()
	}()
	return nil, fn()
}

// Append writes entries to the log in dir with one write call.
func Append(dir string, entries ...Entry) error {
	var buf bytes.Buffer
	for _, e := range entries {
		buf.WriteString(e.String())
		buf.WriteByte('\n')
	}
	capture.Lock()
	if capture.buf != nil && capture.dir == dir {
		capture.buf.Write(buf.Bytes())
		capture.Unlock()
		return nil
	}
	capture.Unlock()
	return AppendBytes(dir, buf.Bytes())
}

// AppendBytes appends whole lines b to the log in dir with one write
// call, and then to the record's mirror of it, the two under the record's
// log lock (Record.LockLog): every append reaches both in one order.
func AppendBytes(dir string, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	rec := record.Of(dir)
	defer rec.LockLog()()
	f, err := safefile.Append(Path(dir), 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	rec.AppendLog(b)
	return nil
}

// Tail returns up to n last lines of the log in dir, oldest first. A missing
// log has no lines; a log that is not a regular file (a FIFO, a device put
// in its place) is not read.
func Tail(dir string, n int) ([]string, error) {
	f, err := safefile.Open(Path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return TailReader(f, n)
}

// tailChunk is how much Tail reads per step backwards from the end.
const tailChunk = 8 << 10

// maxTail bounds how far back Tail reads: the log's lines are short, and a
// log whose end is one huge line (or not text at all) must not be read
// whole. Lines beyond it are not returned.
const maxTail = 4 << 20

// readBack reads r backwards from its end, tailChunk bytes a step (each a
// fresh slice) and no further back than maxTail, handing fn each step's
// bytes, its offset and the end, until fn returns false or the bound or
// the start is reached. It returns the end and the offset of the last step
// read: Tail and TailStart look back through the same window.
func readBack(r io.ReadSeeker, fn func(chunk []byte, pos, end int64) bool) (end, pos int64, err error) {
	end, err = r.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, 0, err
	}
	for pos = end; pos > 0 && end-pos < maxTail; {
		step := min(int64(tailChunk), pos, maxTail-(end-pos))
		pos -= step
		chunk := make([]byte, step)
		if _, err := r.Seek(pos, io.SeekStart); err != nil {
			return 0, 0, err
		}
		if _, err := io.ReadFull(r, chunk); err != nil {
			return 0, 0, err
		}
		if !fn(chunk, pos, end) {
			break
		}
	}
	return end, pos, nil
}

// TailReader returns up to n last lines of r, oldest first, from at most its
// last maxTail bytes.
func TailReader(r io.ReadSeeker, n int) ([]string, error) {
	if n <= 0 {
		return nil, nil
	}
	// Chunks are read backwards and joined once: prepending each to all
	// read so far would copy the tail again at every step.
	var chunks [][]byte
	newlines := 0
	end, pos, err := readBack(r, func(chunk []byte, _, _ int64) bool {
		newlines += bytes.Count(chunk, []byte{'\n'})
		chunks = append(chunks, chunk)
		return newlines <= n
	})
	if err != nil {
		return nil, err
	}
	// Joined into the one string the lines are cut from: a []byte joined
	// first would be copied twice, each copy fresh pages to fault in.
	slices.Reverse(chunks)
	var text strings.Builder
	text.Grow(int(end - pos))
	for _, c := range chunks {
		text.Write(c)
	}
	lines := strings.Split(strings.TrimRight(text.String(), "\n"), "\n")
	if pos > 0 && len(lines) > 0 {
		lines = lines[1:] // the first line may be cut in half
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil, nil
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, nil
}

// TailStart returns the offset in the log in dir at which its last n lines
// begin, looking back no further than Tail does (maxTail): 0 when the log
// has fewer, or none; where that bound cuts a line, the offset past the
// cut line. Reading on from it gives the lines Tail gives (a last line
// without its newline counting as one).
func TailStart(dir string, n int) (int64, error) {
	f, err := safefile.Open(Path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return tailStart(f, n)
}

func tailStart(r io.ReadSeeker, n int) (int64, error) {
	if n <= 0 {
		return r.Seek(0, io.SeekEnd)
	}
	seen, earliest, start := 0, int64(-1), int64(-1) // seen: newlines but the log's last byte
	end, pos, err := readBack(r, func(chunk []byte, at, end int64) bool {
		for i := int64(len(chunk)) - 1; i >= 0; i-- {
			if chunk[i] != '\n' || at+i == end-1 {
				continue
			}
			earliest = at + i
			if seen++; seen == n {
				start = earliest + 1
				return false
			}
		}
		return true
	})
	switch {
	case err != nil:
		return 0, err
	case start >= 0:
		return start, nil
	case pos == 0:
		return 0, nil
	case earliest >= 0:
		return earliest + 1, nil // past the line the bound cut
	}
	return end, nil // one line longer than the bound: none of it
}

// LastSession returns the session number on the log's last line in dir, 0
// when there is none: the session to log under when the state, which holds
// session_count, cannot be read.
func LastSession(dir string) int {
	lines, _ := Tail(dir, 1)
	if len(lines) == 0 {
		return 0
	}
	var n int
	if i := strings.Index(lines[0], "[SESSION-"); i >= 0 {
		fmt.Sscanf(lines[0][i:], "[SESSION-%d]", &n)
	}
	return n
}

// LastMatching returns the last line among the final scan lines of the log in
// dir that contains " "+typ+" ", or "" when none does.
func LastMatching(dir, typ string, scan int) string {
	lines, _ := Tail(dir, scan)
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "] "+typ+" ") || strings.HasSuffix(lines[i], "] "+typ) {
			return lines[i]
		}
	}
	return ""
}
