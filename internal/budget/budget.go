// Package budget measures what a job spends, wall-clock time and API tokens,
// against the limits a person set in session_config (state.Budget).
//
// Each session keeps its own use in usage-<id>.json beside the project's
// record (Record.SessionsDir), written only by that session's hooks, so
// concurrent sessions never race on one file; the job's use is the sum over
// those files. They outlive the session (the job's total needs them), and
// nothing done in the work tree removes them: a `git stash -a` does not
// reset a budget. A session's end moves its file among the ended
// sessions', whose sum is kept in one file (ended.go), so a total reads
// that sum and the live sessions' files, not one file per session the
// job ever had.
//
// Tokens are read from the session's transcript, Claude Code's JSONL record
// of the conversation: every assistant message carries the API's usage
// (input, cache creation, cache read and output tokens), repeated on each of
// the message's lines. The hooks read only what was appended since they last
// looked and count each message once. The transcript can lag behind the hook
// by a message; the count catches up at the next hook.
package budget

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/jsonobj"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/state"
)

// filePrefix starts every usage file's name in the runtime directory.
const filePrefix = "usage-"

// usageFile reports whether name is a live session's usage file. (An
// ended account may carry a suffix of its own, see endFiles: recount
// takes those by the prefix alone.)
func usageFile(name string) bool {
	return strings.HasPrefix(name, filePrefix) && strings.HasSuffix(name, ".json")
}

// WarnAt is the share of a limit at which a warning is given, once.
const WarnAt = 0.8

// maxRead bounds how much of a transcript one hook reads: a session that
// appended more since the last look is counted over several hooks, so a
// hook given a huge transcript (a resumed conversation, a sparse file)
// stays quick.
const maxRead = 4 << 20

// maxLine bounds a line that is counted. The lines that carry usage are an
// assistant message's, far shorter; a longer line (a large tool result, a
// file that is not a transcript) is skipped unread.
const maxLine = 1 << 20

// Session is one session's use.
type Session struct {
	SessionID string    `json:"session_id"`
	Session   int       `json:"session"` // N of its [SESSION-N] log lines
	StartedAt time.Time `json:"started_at"`
	LastSeen  time.Time `json:"last_seen"`
	// Tokens counts the messages read to their end; Pending is the last
	// message read, whose lines may still be arriving.
	Tokens     int64  `json:"tokens"`
	PendingID  string `json:"pending_id,omitempty"`
	Pending    int64  `json:"pending,omitempty"`
	Transcript string `json:"transcript,omitempty"`
	Offset     int64  `json:"offset"`
	// Warned lists the limits already warned about at WarnAt.
	Warned []string `json:"warned,omitempty"`
	// The reviewer's spend (internal/review): its runs are Claude Code
	// sessions of their own, whose transcripts this account never reads.
	Reviews            int   `json:"reviews,omitempty"`
	ReviewMillis       int64 `json:"review_ms,omitempty"`
	ReviewTokens       int64 `json:"review_tokens,omitempty"`
	ReviewCostMicroUSD int64 `json:"review_cost_micro_usd,omitempty"`
}

// Used returns the session's tokens so far, its reviews' included.
func (s *Session) Used() int64 { return s.Tokens + s.Pending + s.ReviewTokens }

// Elapsed returns the session's wall-clock time up to its last hook, and
// never less than its reviews took (an account of reviews run outside any
// session has only those).
func (s *Session) Elapsed() time.Duration {
	reviews := time.Duration(s.ReviewMillis) * time.Millisecond
	if s.LastSeen.Before(s.StartedAt) {
		return reviews
	}
	return max(s.LastSeen.Sub(s.StartedAt), reviews)
}

// OutsideSession names the account of reviews run where no Claude Code
// session is (a person's `harness validate` at a terminal).
const OutsideSession = "outside-session"

// AddReview adds one review's wall time, tokens and cost to the account of
// session sessionID ("" : OutsideSession), which is made when it has none.
// The session's hooks are not running meanwhile: the review runs inside
// the `harness validate` the session's agent is waiting on.
func AddReview(rec record.Record, sessionID string, n int, took time.Duration, tokens int64, costUSD float64, now time.Time) error {
	if sessionID == "" {
		sessionID = OutsideSession
	}
	s := account(rec, sessionID)
	if s == nil {
		s = &Session{SessionID: sessionID, Session: n, StartedAt: now.UTC(), LastSeen: now.UTC()}
	}
	s.addReview(took, tokens, costUSD)
	if s.save(rec) == nil {
		return nil
	}
	// The record is read-only here (a verb in Claude Code's sandbox): the
	// review goes to an account of reviews alone in the project's runtime
	// directory, which Total adds to the session's own.
	path := root.SessionFile(rec.Root, filePrefix, reviewsPrefix+sessionID)
	r := readFile(path)
	if r == nil {
		r = &Session{SessionID: reviewsPrefix + sessionID, Session: n, StartedAt: now.UTC(), LastSeen: now.UTC()}
	}
	r.addReview(took, tokens, costUSD)
	return atomicfile.ReplaceSmall(path, r.encode())
}

// addReview counts one review in s.
func (s *Session) addReview(took time.Duration, tokens int64, costUSD float64) {
	s.Reviews++
	s.ReviewMillis += took.Milliseconds()
	s.ReviewTokens += max(tokens, 0)
	s.ReviewCostMicroUSD += int64(max(costUSD, 0) * 1e6)
}

// reviewsPrefix starts the id of an account of reviews alone (see
// AddReview): not a session of its own.
const reviewsPrefix = "reviews-"

// Path returns the usage file of session sessionID beside the record rec.
func Path(rec record.Record, sessionID string) string { return rec.SessionFile(filePrefix, sessionID) }

// dirs are where the sessions' use files are: beside the record, and the
// project's runtime directory, which held them before (read, so that an
// upgrade keeps what a job spent).
func dirs(rec record.Record) []string {
	out := []string{filepath.Join(rec.Root, root.RuntimeDir)}
	if sd := rec.SessionsDir(); sd != "" {
		out = append([]string{sd}, out...)
	}
	return out
}

// Read returns the use of session sessionID, nil when it has none.
func Read(rec record.Record, sessionID string) *Session {
	return readFile(Path(rec, sessionID))
}

// account is Read for a writer of the session's account: an account the
// session's end put among the ended ones is reopened first (a resume
// goes on with it).
func account(rec record.Record, sessionID string) *Session {
	if s := Read(rec, sessionID); s != nil {
		return s
	}
	if reopen(rec, sessionID) {
		return Read(rec, sessionID)
	}
	return nil
}

func readFile(path string) *Session {
	data, err := safefile.ReadFile(path, safefile.Small)
	if err != nil {
		return nil
	}
	s, ok := decode(data)
	if !ok {
		return nil
	}
	return s
}

// The usage file is written and read by hand (internal/jsonobj), in the
// layout json.MarshalIndent gives the struct and its tags: the Stop hook
// reads it at every turn end, and encoding/json's first use in a process
// costs more than the rest of that hook.

// encode is the usage file's text.
func (s *Session) encode() []byte {
	w := jsonobj.New(true)
	w.Str("session_id", s.SessionID)
	w.Int("session", int64(s.Session))
	w.Str("started_at", s.StartedAt.Format(time.RFC3339Nano))
	w.Str("last_seen", s.LastSeen.Format(time.RFC3339Nano))
	w.Int("tokens", s.Tokens)
	if s.PendingID != "" {
		w.Str("pending_id", s.PendingID)
	}
	if s.Pending != 0 {
		w.Int("pending", s.Pending)
	}
	if s.Transcript != "" {
		w.Str("transcript", s.Transcript)
	}
	w.Int("offset", s.Offset)
	if len(s.Warned) > 0 {
		w.Strs("warned", s.Warned)
	}
	for _, f := range []struct {
		k string
		v int64
	}{{"reviews", int64(s.Reviews)}, {"review_ms", s.ReviewMillis}, {"review_tokens", s.ReviewTokens}, {"review_cost_micro_usd", s.ReviewCostMicroUSD}} {
		if f.v != 0 {
			w.Int(f.k, f.v)
		}
	}
	return w.Bytes()
}

// decode reads a usage file; ok is false when data is not one (not an
// object, a time that does not parse).
func decode(data []byte) (s *Session, ok bool) {
	obj, ok := jsonobj.Read(data)
	if !ok {
		return nil, false
	}
	s = &Session{SessionID: obj.Get("session_id").Str, Session: int(obj.Get("session").Int()),
		Tokens: obj.Get("tokens").Int(), PendingID: obj.Get("pending_id").Str, Pending: obj.Get("pending").Int(),
		Transcript: obj.Get("transcript").Str, Offset: obj.Get("offset").Int(), Warned: jsonobj.Strs(obj.Get("warned")),
		Reviews: int(obj.Get("reviews").Int()), ReviewMillis: obj.Get("review_ms").Int(), ReviewTokens: obj.Get("review_tokens").Int(),
		ReviewCostMicroUSD: obj.Get("review_cost_micro_usd").Int()}
	for _, at := range []struct {
		k string
		t *time.Time
	}{{"started_at", &s.StartedAt}, {"last_seen", &s.LastSeen}} {
		if v := obj.Get(at.k); v.Exists() {
			t, err := time.Parse(time.RFC3339Nano, v.Str)
			if err != nil {
				return nil, false
			}
			*at.t = t
		}
	}
	return s, true
}

// Start opens the session's account when it has none: its clock starts now,
// and only what its transcript gains from here on is counted (a resumed
// conversation's transcript holds the earlier sessions' messages, which
// were counted by them). A session that has an account (compaction, a
// resume with the same id) keeps it.
func Start(rec record.Record, sessionID string, n int, transcript string, now time.Time) *Session {
	if s := account(rec, sessionID); s != nil {
		return s
	}
	s := &Session{SessionID: sessionID, Session: n, StartedAt: now.UTC(), LastSeen: now.UTC(), Transcript: transcript}
	if fi, err := os.Stat(transcript); transcript != "" && err == nil {
		s.Offset = fi.Size()
	}
	s.save(rec)
	return s
}

// Observe brings the session's account up to date: the clock to now, the
// tokens to what the transcript holds. A session without an account gets
// one that started now and counts its whole transcript.
func Observe(rec record.Record, sessionID string, n int, transcript string, now time.Time) *Session {
	s := account(rec, sessionID)
	fresh := s == nil
	if fresh {
		s = &Session{SessionID: sessionID, Session: n, StartedAt: now.UTC()}
	}
	seen, offset := s.LastSeen, s.Offset
	s.LastSeen = now.UTC()
	if transcript != "" {
		if s.Transcript != transcript {
			s.Transcript, s.Offset = transcript, 0
		}
		s.count()
	}
	// The Stop hook runs at every turn end: the file is written when the
	// count moved, and otherwise at most every saveEvery (the clock is
	// measured in minutes).
	if fresh || s.Offset != offset || now.Sub(seen) >= saveEvery {
		s.save(rec)
	}
	return s
}

// saveEvery is how stale the clock in a usage file may be.
const saveEvery = 30 * time.Second

// count reads the transcript from the offset on, whole lines only, at most
// maxRead bytes of it. A transcript that is not a regular file (a FIFO, a
// device) is not read at all.
func (s *Session) count() {
	f, err := safefile.Open(s.Transcript)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return
	}
	if fi.Size() < s.Offset {
		s.Offset = 0 // a rewritten transcript: count it again from its start
	}
	end := min(fi.Size(), s.Offset+maxRead)
	r := bufio.NewReaderSize(io.NewSectionReader(f, s.Offset, end-s.Offset), 64<<10)
	pos := s.Offset
	var line []byte
	long := false // the line being read is over maxLine: skipped
	for {
		chunk, err := r.ReadSlice('\n')
		pos += int64(len(chunk))
		if !long && len(line)+len(chunk) <= maxLine {
			line = append(line, chunk...)
		} else {
			long, line = true, line[:0]
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			// The end of what is read this time. An incomplete last line
			// is read again next time, unless it is already over maxLine:
			// what was read of it is passed over for good.
			if long {
				s.Offset = pos
			}
			return
		}
		s.Offset = pos
		if !long {
			s.add(line)
		}
		line, long = line[:0], false
	}
}

// add counts one transcript line.
func (s *Session) add(line []byte) {
	msg := gjson.GetBytes(line, "message")
	usage := msg.Get("usage")
	if !usage.IsObject() {
		return
	}
	var n int64
	for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} {
		n += usage.Get(k).Int()
	}
	id := msg.Get("id").Str
	if id != "" && id == s.PendingID {
		s.Pending = max(s.Pending, n) // the same message's next line
		return
	}
	s.Tokens += s.Pending
	s.PendingID, s.Pending = id, n
}

func (s *Session) save(rec record.Record) error {
	return atomicfile.ReplaceSmall(Path(rec, s.SessionID), s.encode())
}

// Warn records that limit was warned about; it reports false when it was
// already.
func (s *Session) Warn(rec record.Record, limit string) bool {
	for _, w := range s.Warned {
		if w == limit {
			return false
		}
	}
	s.Warned = append(s.Warned, limit)
	s.save(rec)
	return true
}

// Job is the use of the whole job: every session's, summed.
type Job struct {
	Sessions int
	Elapsed  time.Duration
	Tokens   int64
	// Reviews is the part of the above the reviewer spent.
	Reviews Reviews
}

// Reviews is what the reviewer's runs spent.
type Reviews struct {
	Count        int
	Elapsed      time.Duration
	Tokens       int64
	CostMicroUSD int64
}

// Total sums the use of every session of the job of rec. current, when not
// nil, is the calling session's account as it is now (it may be newer than
// its file).
func Total(rec record.Record, current *Session) Job {
	var j Job
	if sd := rec.SessionsDir(); sd != "" && fileExists(sd) {
		// The sum and the live accounts read together: a session's end
		// moving its account between the two reads would be counted in
		// neither. (Where the lock cannot be made, a verb in Claude Code's
		// sandbox, they are read without it.)
		if unlock, err := lock.File(filepath.Join(sd, endedLock), endedWait); err == nil {
			defer unlock()
		}
		j = endedIn(sd).job
	}
	seen := map[string]bool{}
	for _, d := range dirs(rec) {
		entries, _ := safefile.ReadDir(d)
		for _, e := range entries {
			if !usageFile(e.Name()) || seen[e.Name()] {
				continue
			}
			seen[e.Name()] = true // the first directory's copy counts
			s := readFile(filepath.Join(d, e.Name()))
			if s == nil {
				continue
			}
			if current != nil && s.SessionID == current.SessionID {
				continue
			}
			j.add(s)
		}
	}
	if current != nil {
		j.add(current)
	}
	return j
}

func (j *Job) add(s *Session) {
	if s.SessionID != OutsideSession && !strings.HasPrefix(s.SessionID, reviewsPrefix) {
		j.Sessions++
	}
	j.Elapsed += s.Elapsed()
	j.Tokens += s.Used()
	j.Reviews.Count += s.Reviews
	j.Reviews.Elapsed += time.Duration(s.ReviewMillis) * time.Millisecond
	j.Reviews.Tokens += s.ReviewTokens
	j.Reviews.CostMicroUSD += s.ReviewCostMicroUSD
}

// Line is one limit measured: its session_config name, the limit, what was
// used (minutes or tokens).
type Line struct {
	Name  string
	Limit int64
	Used  int64
}

// Over reports whether the limit is reached.
func (l Line) Over() bool { return l.Limit > 0 && l.Used >= l.Limit }

// Near reports whether WarnAt of the limit is used, and not all of it.
func (l Line) Near() bool {
	return l.Limit > 0 && !l.Over() && float64(l.Used) >= WarnAt*float64(l.Limit)
}

// Percent is the share of the limit used, in whole percent.
func (l Line) Percent() int64 {
	if l.Limit <= 0 {
		return 0
	}
	return l.Used * 100 / l.Limit
}

// String renders the line: "max_job_tokens=2000000: 1650000 used (82%)".
func (l Line) String() string {
	unit := ""
	if strings.HasSuffix(l.Name, "_minutes") {
		unit = " min"
	}
	return fmt.Sprintf("%s=%d: %d%s used (%d%%)", l.Name, l.Limit, l.Used, unit, l.Percent())
}

// Measure lines up every limit set in b with what job and session (nil: no
// session) used. Limits not set are left out.
func Measure(b state.Budget, job Job, session *Session) []Line {
	var out []Line
	add := func(name string, limit int, used int64) {
		if limit > 0 {
			out = append(out, Line{Name: name, Limit: int64(limit), Used: used})
		}
	}
	add("max_job_minutes", b.JobMinutes, int64(job.Elapsed/time.Minute))
	add("max_job_tokens", b.JobTokens, job.Tokens)
	if session != nil {
		add("max_session_minutes", b.SessionMinutes, int64(session.Elapsed()/time.Minute))
		add("max_session_tokens", b.SessionTokens, session.Used())
	}
	return out
}

// Over returns the lines whose limit is reached.
func Over(lines []Line) []Line {
	var out []Line
	for _, l := range lines {
		if l.Over() {
			out = append(out, l)
		}
	}
	return out
}

// Near returns the lines at WarnAt of their limit or more, not over it.
func Near(lines []Line) []Line {
	var out []Line
	for _, l := range lines {
		if l.Near() {
			out = append(out, l)
		}
	}
	return out
}

// Join renders lines separated by "; ".
func Join(lines []Line) string {
	s := make([]string, len(lines))
	for i, l := range lines {
		s[i] = l.String()
	}
	return strings.Join(s, "; ")
}

// Reset forgets what every session spent: a new job starts at zero.
func Reset(rec record.Record) {
	if sd := rec.SessionsDir(); sd != "" {
		os.RemoveAll(filepath.Join(sd, endedDir))
		os.Remove(filepath.Join(sd, endedSum))
	}
	for _, rd := range dirs(rec) {
		entries, _ := safefile.ReadDir(rd)
		for _, e := range entries {
			if usageFile(e.Name()) {
				os.Remove(filepath.Join(rd, e.Name()))
			}
		}
	}
}
