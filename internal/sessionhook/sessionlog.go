package sessionhook

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/safefile"
)

// maxSessionRead bounds how much of the log one session's story may take:
// a session that logged more than this is judged on its last part.
const maxSessionRead = 4 << 20

// tailWithoutRuntime is how many lines are scanned for a session that has no
// runtime file (hooks installed mid-session): its lines are the recent ones.
const tailWithoutRuntime = 2000

// regressionNote ends the ERROR line of a task the verification gate
// reopened; it is not a task outcome of its own.
const regressionNote = "regression detected at session end"

// leaseClaim follows the task id in the LOCK line of a concurrent-mode claim.
const leaseClaim = " claimed (lease_expires_at="

// sessionLog is what the session's part of the progress log says.
type sessionLog struct {
	completed []string // ids with a Completed line, first completion first, once each
	outcomes  int      // Completed lines plus task ERROR lines: tasks executed
	// unverified counts the completed ids the record holds as not yet
	// verified (record.Mark.Unverified): completions the record adopted
	// without a validation the trusted side saw. The log, which the agent
	// can write, does not decide whether they are checked.
	unverified int
}

// addUnverified adds the record's unverified completions to the session's.
func (l *sessionLog) addUnverified(p *project.Project) {
	m, ok := p.Mark()
	if !ok {
		return
	}
	for _, id := range m.Unverified {
		l.unverified++
		if !slices.Contains(l.completed, id) {
			l.completed = append(l.completed, id)
		}
	}
}

// owner says whose task outcomes a session's log lines are.
//
// Exclusive mode (worker == ""): the lines tagged [SESSION-n]. The session
// holds the lock, so nobody else logs task outcomes while it lives.
//
// Concurrent mode: every worker tags its lines with the global
// session_count, which moves whenever any worker starts a session, so the
// number says nothing about who wrote a line. An outcome is this worker's
// when this worker was the last to claim the task before it: the LOCK line
// `<id> claimed (lease_expires_at=… worker=W)` after a claim's Starting line
// (or, in older logs, a `Starting [id] (… worker=W)` line), a RECOVERY line
// `re-claimed by W`, or a claim it held (held) before the lines read begin.
// A task's claimed_by cannot tell: completing or failing a task clears it.
type owner struct {
	n      int
	worker string
	held   []string
}

// readSessionLog sums up the task outcomes of the session's lines of the
// log that are its own: those after the runtime's log offset.
//
// The sum is kept in the runtime (rt.Story) with how far it reaches, and
// each call reads only the lines appended since: Stop runs at every turn
// end, and reading the session's whole part again each time grew with the
// session. The caller saves the runtime.
//
// A session with no offset (its start found no harness state: the harness
// was initialised, or its hooks installed, while it ran) takes the recent
// lines, the last tailWithoutRuntime, as its own, and its runtime remembers
// where they begin: each turn end after reads only what follows, and its
// early lines stay in the sum however long the session runs.
func readSessionLog(dir string, rt *Runtime, who owner) sessionLog {
	if rt.LogOffset < 0 {
		start, err := progress.TailStart(dir, tailWithoutRuntime)
		if err != nil {
			return sessionLog{} // no log to read: nothing done
		}
		rt.LogOffset, rt.Story = start, nil
	}
	st := rt.Story
	if st == nil || st.Read < rt.LogOffset {
		st = &Story{Read: rt.LogOffset}
	}
	lines, read, restarted := linesAfter(dir, st.Read)
	if restarted {
		st = &Story{} // the log was replaced: judge on its last part
	}
	t := newTally(who, st)
	for _, l := range lines {
		t.line(l)
	}
	rt.Story = t.story(read)
	return t.out
}

// Story is the sum of a session's own lines of the log up to Read, kept in
// its runtime so that the next Stop reads only what follows.
type Story struct {
	Read      int64    `json:"read"` // the log offset summed up to: a line's end
	Completed []string `json:"completed,omitempty"`
	Outcomes  int      `json:"outcomes,omitempty"`
	// Concurrent mode: the tasks whose last claim read was this worker's
	// (Claimed), and those the session holds whose last claim read was
	// another's (Others).
	Claimed []string `json:"claimed,omitempty"`
	Others  []string `json:"others,omitempty"`
}

// tally sums up lines for one session.
type tally struct {
	who     owner
	tag     string
	claimed map[string]bool // concurrent mode: task id -> last claimed by this worker
	seen    map[string]bool
	out     sessionLog
}

// newTally starts from st (nil: nothing read yet). The tasks the session
// holds (who.held) count as claimed by it unless a line read says whose
// they are.
func newTally(who owner, st *Story) *tally {
	t := &tally{who: who, tag: "[SESSION-" + strconv.Itoa(who.n) + "] ", claimed: map[string]bool{}, seen: map[string]bool{}}
	if st != nil {
		for _, id := range st.Claimed {
			t.claimed[id] = true
		}
		for _, id := range st.Others {
			t.claimed[id] = false
		}
		for _, id := range st.Completed {
			t.seen[id] = true
		}
		t.out = sessionLog{completed: slices.Clone(st.Completed), outcomes: st.Outcomes}
	}
	for _, id := range who.held {
		if _, known := t.claimed[id]; !known {
			t.claimed[id] = true
		}
	}
	return t
}

// story is what t summed, up to the log offset read. Of the tasks last
// claimed by another worker it keeps those the session holds: only there
// does it change anything (newTally's seeding); any other task becomes
// this worker's again only through a claim line yet to be read.
func (t *tally) story(read int64) *Story {
	st := &Story{Read: read, Completed: t.out.completed, Outcomes: t.out.outcomes}
	if t.who.worker != "" {
		for _, id := range slices.Sorted(maps.Keys(t.claimed)) {
			switch {
			case t.claimed[id]:
				st.Claimed = append(st.Claimed, id)
			case slices.Contains(t.who.held, id):
				st.Others = append(st.Others, id)
			}
		}
	}
	return st
}

// line adds one log line.
func (t *tally) line(l string) {
	who := t.who
	i := strings.Index(l, "] [SESSION-")
	if i < 0 {
		return
	}
	tagged := strings.HasPrefix(l[i+2:], t.tag)
	end := strings.Index(l[i+2:], "] ")
	if end < 0 {
		return
	}
	typ, id, cat, msg := fields(l[i+2+end+2:])
	if who.worker != "" && typ == progress.Lock {
		if k := strings.Index(msg, leaseClaim); k > 0 {
			t.claimed[msg[:k]] = strings.HasSuffix(msg, " worker="+who.worker+")")
		}
		return
	}
	if id == "" {
		return
	}
	if who.worker != "" {
		switch typ {
		case progress.Starting: // a new claim; whose, its LOCK line says
			t.claimed[id] = strings.HasSuffix(l, " worker="+who.worker+")")
			return
		case progress.Recovery:
			if strings.Contains(msg, "re-claimed by "+who.worker+`"`) {
				t.claimed[id] = true
			}
			return
		}
		if !t.claimed[id] {
			return
		}
	} else if !tagged {
		return
	}
	switch {
	case typ == progress.Completed:
		t.out.outcomes++
		if !t.seen[id] {
			t.seen[id] = true
			t.out.completed = append(t.out.completed, id)
		}
	case typ == progress.Error && cat != "" && cat != failure.Dependency && !strings.HasPrefix(msg, regressionNote):
		t.out.outcomes++
	}
}

// fields splits "TYPE [id] [CATEGORY] message" after the session tag. A
// session-level line ("ERROR [ENV_SETUP] …") has a category and no id.
func fields(rest string) (typ, id, cat, msg string) {
	sp := strings.IndexByte(rest, ' ')
	if sp < 0 {
		return rest, "", "", ""
	}
	typ, rest = rest[:sp], rest[sp+1:]
	var groups []string
	for len(groups) < 2 && strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			break
		}
		groups = append(groups, rest[1:end])
		rest = strings.TrimPrefix(rest[end+1:], " ")
	}
	switch {
	case len(groups) == 2:
		return typ, groups[0], groups[1], rest
	case len(groups) == 1 && typ == progress.Error && isCategory(groups[0]):
		return typ, "", groups[0], rest
	case len(groups) == 1:
		return typ, groups[0], "", rest
	}
	return typ, "", "", rest
}

func isCategory(s string) bool {
	for _, c := range failure.Categories {
		if s == c {
			return true
		}
	}
	return false
}

// linesAfter returns the log's complete lines after byte offset, at most
// maxSessionRead bytes of them (the last ones), and the offset of the end
// of the last line returned: an incomplete last line is read next time.
// restarted is true when the log is shorter than offset (it was replaced):
// its last part is read then.
func linesAfter(dir string, offset int64) (lines []string, read int64, restarted bool) {
	cut := false
	buf, _, err := safefile.ReadPart(progress.Path(dir), func(size int64) (int64, int64) {
		if offset < 0 || offset > size {
			offset, restarted = 0, true
		}
		if size-offset > maxSessionRead {
			offset, cut = size-maxSessionRead, true
		}
		return offset, size - offset
	})
	if err != nil {
		return nil, offset, restarted
	}
	whole := bytes.LastIndexByte(buf, '\n') + 1
	text := string(buf[:whole])
	read = offset + int64(whole)
	if cut {
		// The first line may be cut in half.
		if k := strings.IndexByte(text, '\n'); k >= 0 {
			text = text[k+1:]
		}
	}
	if text == "" {
		return nil, read, restarted
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n"), read, restarted
}
