package workers

import (
	"fmt"
	"strings"

	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/taskcycle"
)

// Board is what a person sees of the workers: `harness status` (and
// --watch) and the report show it.
type Board struct {
	PID     int         `json:"pid"`
	Live    bool        `json:"live"`
	Branch  string      `json:"branch"`
	Ended   string      `json:"ended,omitempty"`
	Queue   []string    `json:"merge_queue"` // tasks validated, waiting to be integrated
	Workers []WorkerRow `json:"workers"`
}

// WorkerRow is one worker on the Board.
type WorkerRow struct {
	WorkerStatus
	Task     string `json:"task,omitempty"`
	Title    string `json:"title,omitempty"`
	Attempt  int    `json:"attempt,omitempty"`
	Attempts int    `json:"max_attempts,omitempty"`
	LastLine string `json:"last_log_line,omitempty"`
}

// View is the Board of the job at stateRoot, nil when no supervisor ever
// ran for it. tail is the recent log, newest last.
func View(stateRoot string, s *state.State, tail []string) *Board {
	st, live, ok := ReadStatus(stateRoot)
	if !ok {
		return nil
	}
	b := &Board{PID: st.PID, Live: live, Branch: st.Branch, Ended: st.Ended, Queue: []string{}}
	if !live && st.Ended == "" {
		b.Ended = "the supervisor is gone (it was killed)"
	}
	for _, t := range taskcycle.Queue(s) {
		b.Queue = append(b.Queue, t.ID)
	}
	for _, w := range st.Workers {
		row := WorkerRow{WorkerStatus: w}
		if !live && w.State == "running" {
			row.State, row.PID = "gone", 0
		}
		for i := range s.Tasks {
			t := &s.Tasks[i]
			if t.Status == state.InProgress && !t.Validated() && t.ClaimedBy == w.ID {
				row.Task, row.Title, row.Attempt, row.Attempts = t.ID, t.Title, t.Attempts+1, t.MaxAttempts
			}
		}
		row.LastLine = lastLineOf(tail, row.Task, w.ID)
		b.Workers = append(b.Workers, row)
	}
	return b
}

// lastLineOf is the newest log line about task (or, without one, naming
// the worker).
func lastLineOf(tail []string, task, id string) string {
	for i := len(tail) - 1; i >= 0; i-- {
		l := tail[i]
		if task != "" && (strings.Contains(l, "["+task+"]") || strings.Contains(l, " "+task+" ")) {
			return l
		}
		if task == "" && (strings.Contains(l, "worker="+id+")") || strings.Contains(l, " "+id+"'s ") || strings.Contains(l, "worker "+id+" ")) {
			return l
		}
	}
	return ""
}

// Lines renders the Board for a terminal.
func (b *Board) Lines() []string {
	head := fmt.Sprintf("workers (supervisor pid %d, integration branch %s): ", b.PID, b.Branch)
	if b.Live {
		head += "running"
	} else {
		head += "ended: " + b.Ended
	}
	out := []string{head}
	for _, w := range b.Workers {
		l := fmt.Sprintf("  %s %s", w.ID, w.State)
		if w.PID > 0 {
			l += fmt.Sprintf(" (pid %d)", w.PID)
		}
		l += fmt.Sprintf(", %d sessions", w.Sessions)
		if w.Task != "" {
			l += fmt.Sprintf(": %s %s, attempt %d/%d", w.Task, w.Title, w.Attempt, w.Attempts)
		} else {
			l += ": no task"
		}
		out = append(out, l)
		if w.LastLine != "" {
			out = append(out, "     "+progress.OneLine(w.LastLine))
		}
	}
	if len(b.Queue) > 0 {
		out = append(out, "  merge queue: "+strings.Join(b.Queue, ", "))
	}
	return out
}
