// Package report builds the self-contained HTML page `harness report` writes:
// the dependency graph in a layered layout, a timeline read from the progress
// log, a sortable task table and the headline numbers. Only the harness CLI
// links it; no hook does.
package report

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/graph"
	"github.com/harness-agent/harness/internal/state"
)

// Event is one progress-log line the timeline shows.
type Event struct {
	Time     time.Time
	Session  int
	Type     string
	TaskID   string
	Category string
	Message  string
}

// Title is the event as its diamond's tooltip says it: the log line's
// words, without the brackets of a task or category it has not.
func (e Event) Title() string {
	parts := []string{e.Type}
	if e.TaskID != "" {
		parts = append(parts, e.TaskID)
	}
	if e.Category != "" {
		parts = append(parts, "["+e.Category+"]")
	}
	if e.Message != "" {
		parts = append(parts, e.Message)
	}
	return strings.Join(parts, " ")
}

// Attempt is one claim of a task: Starting until Completed or ERROR.
type Attempt struct {
	TaskID  string
	Session int
	Start   time.Time
	End     time.Time // zero: still open at the end of the log
	Outcome string    // "completed", "failed" or "" while open
}

// Session is one session's span in the log.
type Session struct {
	N          int
	Start, End time.Time
}

// Timeline is what the log tells, gathered in one streaming pass.
type Timeline struct {
	Sessions []Session
	Attempts []Attempt
	Markers  []Event     // rollbacks, recoveries, tamper reverts, valve openings, reflection rounds, warnings
	Done     []time.Time // completion times, in log order: the burn-up
	Lines    int
	Skipped  int // lines that are not protocol entries
	Last     time.Time
}

// maxLine bounds the memory one log line may take; longer lines are skipped.
const maxLine = 1 << 20

// ReadLog streams the progress log once and builds the timeline. Memory grows
// with the number of events kept, never with the log's size per line.
func ReadLog(r io.Reader) (*Timeline, error) {
	tl := &Timeline{}
	open := map[string]int{} // task id → index of its open attempt
	sessions := map[int]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for {
		if !sc.Scan() {
			if err := sc.Err(); err == bufio.ErrTooLong {
				tl.Skipped++
				sc = bufio.NewScanner(r)
				sc.Buffer(make([]byte, 64<<10), maxLine)
				continue
			} else if err != nil {
				return tl, err
			}
			break
		}
		tl.Lines++
		e, ok := ParseLine(sc.Text())
		if !ok {
			tl.Skipped++
			continue
		}
		tl.Last = e.Time
		if i, ok := sessions[e.Session]; ok {
			tl.Sessions[i].End = e.Time
		} else {
			sessions[e.Session] = len(tl.Sessions)
			tl.Sessions = append(tl.Sessions, Session{N: e.Session, Start: e.Time, End: e.Time})
		}
		switch e.Type {
		case "Starting":
			if e.TaskID == "" {
				continue
			}
			open[e.TaskID] = len(tl.Attempts)
			tl.Attempts = append(tl.Attempts, Attempt{TaskID: e.TaskID, Session: e.Session, Start: e.Time})
		case "Completed", "ERROR":
			i, ok := open[e.TaskID]
			if e.TaskID == "" || !ok {
				if e.Type == "ERROR" {
					tl.Markers = append(tl.Markers, e)
				}
				continue
			}
			delete(open, e.TaskID)
			tl.Attempts[i].End = e.Time
			if e.Type == "Completed" {
				tl.Attempts[i].Outcome = "completed"
				tl.Done = append(tl.Done, e.Time)
			} else {
				tl.Attempts[i].Outcome = "failed"
				tl.Markers = append(tl.Markers, e)
			}
		case "INIT", "STATS", "CHECKPOINT", "LOCK":
		default: // ROLLBACK, RECOVERY, TAMPER, WARN, valve and reflection entries
			tl.Markers = append(tl.Markers, e)
		}
	}
	return tl, nil
}

// ParseLine reads `[time] [SESSION-n] TYPE [task-id]? [CATEGORY]? message`.
func ParseLine(line string) (Event, bool) {
	var e Event
	ts, rest, ok := bracket(line)
	if !ok {
		return e, false
	}
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return e, false
	}
	e.Time = t
	sess, rest, ok := bracket(strings.TrimPrefix(rest, " "))
	if !ok || !strings.HasPrefix(sess, "SESSION-") {
		return e, false
	}
	if e.Session, err = strconv.Atoi(sess[len("SESSION-"):]); err != nil {
		return e, false
	}
	rest = strings.TrimPrefix(rest, " ")
	e.Type, rest, _ = strings.Cut(rest, " ")
	if e.Type == "" {
		return e, false
	}
	// `[task-id] [CATEGORY]`, `[task-id]` or `[CATEGORY]`: a lone bracket
	// is a category when it looks like one (upper case, digits, _).
	first, r, ok := bracket(rest)
	if ok {
		rest = strings.TrimPrefix(r, " ")
		if second, r, ok := bracket(rest); ok && isCategory(second) {
			e.TaskID, e.Category, rest = first, second, strings.TrimPrefix(r, " ")
		} else if isCategory(first) {
			e.Category = first
		} else {
			e.TaskID = first
		}
	}
	e.Message = rest
	return e, true
}

func isCategory(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

func bracket(s string) (inside, rest string, ok bool) {
	if !strings.HasPrefix(s, "[") {
		return "", s, false
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return "", s, false
	}
	return s[1:end], s[end+1:], true
}

// attemptsMade is how many attempts t has had, the one under way counted,
// as `harness status` words it: the tasks file counts failed attempts only,
// so a task done at the first attempt has attempts 0, and is 1 of 3 here.
func attemptsMade(t *state.Task) int {
	if t.Status == state.Completed || t.Status == state.InProgress {
		return t.Attempts + 1
	}
	return t.Attempts
}

// attemptsFinished is how many of t's attempts have ended, passed or failed.
func attemptsFinished(t *state.Task) int {
	if t.Status == state.Completed {
		return t.Attempts + 1
	}
	return t.Attempts
}

// attemptsOf counts each task's attempts the log shows: made (the open one
// included) and ended (passed or failed). A `harness retry` resets the
// tasks file's count, not the log's.
func (tl *Timeline) attemptsOf() (made, ended map[string]int) {
	made, ended = map[string]int{}, map[string]int{}
	for _, a := range tl.Attempts {
		made[a.TaskID]++
		if a.Outcome != "" {
			ended[a.TaskID]++
		}
	}
	return made, ended
}

// Headline is the numbers at the top of the page.
type Headline struct {
	Done, Total       int
	AttemptsTotal     int           // attempts that ended, passed or failed
	SuccessPerAttempt float64       // completed tasks per attempt that ended, 0..1
	MeanTask          time.Duration // mean of the attempts in the log that completed a task
	Timed             int           // those attempts: MeanTask means nothing without one
	Sessions, MaxSess int
	SinceProgress     time.Duration // since the last log line; -1 when there is none
	// Budget is the job's budget limits with what was used (set by the
	// caller, which knows where the sessions' accounts are).
	Budget []budget.Line
}

// Data is everything the page shows.
type Data struct {
	State    *state.State
	Graph    graph.Graph
	Layout   Layout
	Timeline *Timeline
	Headline Headline
	Now      time.Time
	// Workers is the board of `harness workers`, as status prints it (set
	// by the caller); empty when no supervisor ran.
	Workers []string
}

// Build puts the state and the log's timeline together.
func Build(s *state.State, tl *Timeline, now time.Time) *Data {
	g := graph.Build(s.Tasks)
	d := &Data{State: s, Graph: g, Layout: Lay(g), Timeline: tl, Now: now}
	h := &d.Headline
	h.Total = len(s.Tasks)
	_, ended := tl.attemptsOf()
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if t.Status == state.Completed {
			h.Done++
		}
		// The tasks file counts the attempts since the last retry; the
		// log, every one the timeline draws: the larger is the truth.
		h.AttemptsTotal += max(attemptsFinished(t), ended[t.ID])
	}
	if h.AttemptsTotal > 0 {
		h.SuccessPerAttempt = float64(h.Done) / float64(h.AttemptsTotal)
	}
	var sum time.Duration
	var n int
	for _, a := range tl.Attempts {
		if a.Outcome == "completed" {
			sum += a.End.Sub(a.Start)
			n++
		}
	}
	if n > 0 {
		h.MeanTask, h.Timed = sum/time.Duration(n), n
	}
	h.Sessions, h.MaxSess = s.SessionCount, s.Config.MaxSessions
	h.SinceProgress = -1
	if !tl.Last.IsZero() {
		h.SinceProgress = now.Sub(tl.Last)
	}
	sort.SliceStable(tl.Sessions, func(i, j int) bool { return tl.Sessions[i].Start.Before(tl.Sessions[j].Start) })
	return d
}
