package sessionhook

import (
	"io"
	"strconv"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/progress"
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

// readSessionLog reads the session's lines of the log (those after the
// runtime's log offset, or the recent ones without a runtime) and sums up
// the task outcomes that are its own.
func readSessionLog(dir string, rt *Runtime, who owner) sessionLog {
	var lines []string
	if rt != nil && rt.LogOffset >= 0 {
		lines = linesFrom(dir, rt.LogOffset)
	} else {
		lines, _ = progress.Tail(dir, tailWithoutRuntime)
	}
	tag := "[SESSION-" + strconv.Itoa(who.n) + "] "
	claimed := map[string]bool{} // concurrent mode: task id -> last claimed by this worker
	for _, id := range who.held {
		claimed[id] = true
	}
	var out sessionLog
	seen := map[string]bool{}
	for _, l := range lines {
		i := strings.Index(l, "] [SESSION-")
		if i < 0 {
			continue
		}
		tagged := strings.HasPrefix(l[i+2:], tag)
		end := strings.Index(l[i+2:], "] ")
		if end < 0 {
			continue
		}
		typ, id, cat, msg := fields(l[i+2+end+2:])
		if who.worker != "" && typ == progress.Lock {
			if k := strings.Index(msg, leaseClaim); k > 0 {
				claimed[msg[:k]] = strings.HasSuffix(msg, " worker="+who.worker+")")
			}
			continue
		}
		if id == "" {
			continue
		}
		if who.worker != "" {
			switch typ {
			case progress.Starting: // a new claim; whose, its LOCK line says
				claimed[id] = strings.HasSuffix(l, " worker="+who.worker+")")
				continue
			case progress.Recovery:
				if strings.Contains(msg, "re-claimed by "+who.worker+`"`) {
					claimed[id] = true
				}
				continue
			}
			if !claimed[id] {
				continue
			}
		} else if !tagged {
			continue
		}
		switch {
		case typ == progress.Completed:
			out.outcomes++
			if !seen[id] {
				seen[id] = true
				out.completed = append(out.completed, id)
			}
		case typ == progress.Error && cat != "" && cat != failure.Dependency && !strings.HasPrefix(msg, regressionNote):
			out.outcomes++
		}
	}
	return out
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

// linesFrom returns the log's complete lines after byte offset, at most
// maxSessionRead bytes of them.
func linesFrom(dir string, offset int64) []string {
	f, err := safefile.Open(progress.Path(dir))
	if err != nil {
		return nil
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil
	}
	if offset < 0 || offset > size {
		offset = 0 // the log was replaced: judge on its last part
	}
	cut := false
	if size-offset > maxSessionRead {
		offset, cut = size-maxSessionRead, true
	}
	buf := make([]byte, size-offset)
	if _, err := f.ReadAt(buf, offset); err != nil && err != io.EOF {
		return nil
	}
	text := strings.TrimRight(string(buf), "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if cut {
		lines = lines[1:] // the first line may be cut in half
	}
	return lines
}
