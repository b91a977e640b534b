package cli

import (
	"encoding/json"
	"fmt"

	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
)

func init() {
	register(&command{name: "status", args: "[--json]",
		summary: "show counts, one line per task, recent log lines and sessions (read-only, no lock)",
		run:     runStatus})
}

// statusTask is one task in `status --json`.
type statusTask struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Status      string `json:"status"`
	Priority    string `json:"priority"`
	Attempts    int    `json:"attempts"`
	MaxAttempts int    `json:"max_attempts"`
	Blocked     bool   `json:"blocked"`
	ClaimedBy   string `json:"claimed_by,omitempty"`
}

// statusJSON is the stable machine-readable shape of `status --json`.
type statusJSON struct {
	Root         string         `json:"root"`
	Active       bool           `json:"active"`
	Counts       map[string]int `json:"counts"`
	Next         *statusTask    `json:"next"`
	Why          string         `json:"why,omitempty"`
	Tasks        []statusTask   `json:"tasks"`
	SessionCount int            `json:"session_count"`
	LastSession  string         `json:"last_session"`
	Recent       []string       `json:"recent_log"`
	FromBackup   bool           `json:"from_backup,omitempty"`
}

func runStatus(e *Env, args []string) int {
	c := commands["status"]
	fs := e.flags(c)
	asJSON := fs.Bool("json", false, "print JSON for machines")
	if pos, err := e.parse(fs, args); err != nil {
		return e.fail(err)
	} else if len(pos) > 0 {
		return e.fail(usageErr(c, "unexpected argument %q", pos[0]))
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	s, err := state.Load(dir)
	if err != nil {
		return e.fail(err)
	}
	st := schedule.Count(s.Tasks)
	recent, _ := progress.Tail(dir, 5)
	byID := schedule.Index(s.Tasks)
	blocked := func(t *state.Task) bool {
		if t.Status != state.Pending {
			return false
		}
		for _, d := range t.DependsOn {
			if j, ok := byID[d]; ok && s.Tasks[j].PermanentlyFailed() {
				return true
			}
		}
		return false
	}
	var next *state.Task
	if cands := schedule.Candidates(s.Tasks); len(cands) > 0 {
		next = cands[0]
	}
	if *asJSON {
		out := statusJSON{Root: dir, Active: isActive(dir), SessionCount: s.SessionCount, LastSession: s.LastSession,
			Recent: orEmpty(recent), FromBackup: s.FromBackup, Tasks: []statusTask{},
			Counts: map[string]int{"total": st.Total, "pending": st.Pending, "in_progress": st.InProgress,
				"completed": st.Completed, "failed": st.Failed, "blocked": st.Blocked}}
		for i := range s.Tasks {
			t := &s.Tasks[i]
			out.Tasks = append(out.Tasks, statusTask{ID: t.ID, Title: t.Title, Status: t.Status, Priority: t.Priority,
				Attempts: t.Attempts, MaxAttempts: t.MaxAttempts, Blocked: blocked(t), ClaimedBy: t.ClaimedBy})
		}
		if next != nil {
			out.Next = &statusTask{ID: next.ID, Title: next.Title, Status: next.Status, Priority: next.Priority,
				Attempts: next.Attempts, MaxAttempts: next.MaxAttempts}
		} else {
			out.Why = string(schedule.Explain(s.Tasks))
		}
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		enc.Encode(out)
		return ExitOK
	}
	w := e.Stdout
	if s.FromBackup {
		fmt.Fprintln(w, "WARN harness-tasks.json is corrupt; showing harness-tasks.json.bak (any state-changing harness command restores it)")
	}
	active := "active"
	if !isActive(dir) {
		active = "inactive (no .harness-active)"
	}
	fmt.Fprintf(w, "harness %s — %s\n", dir, active)
	fmt.Fprintf(w, "tasks: %s\n", st.Counts())
	if next != nil {
		fmt.Fprintf(w, "next:  %s: %s\n", next.ID, next.Title)
	} else {
		fmt.Fprintf(w, "next:  none (%s)\n", schedule.Explain(s.Tasks))
	}
	if len(s.Tasks) > 0 {
		fmt.Fprintln(w)
	}
	for i := range s.Tasks {
		t := &s.Tasks[i]
		label := t.Status
		if blocked(t) {
			label = "blocked"
		}
		extra := ""
		if t.Status == state.InProgress && t.ClaimedBy != "" {
			extra = "  claimed by " + t.ClaimedBy
		}
		fmt.Fprintf(w, "[%s] %s: %s (%d/%d)%s\n", label, t.ID, t.Title, t.Attempts, t.MaxAttempts, extra)
	}
	last := s.LastSession
	if last == "" {
		last = "never"
	}
	fmt.Fprintf(w, "\nsessions: %d (last ended %s)\n", s.SessionCount, last)
	if len(recent) > 0 {
		fmt.Fprintln(w, "recent log:")
		for _, l := range recent {
			fmt.Fprintln(w, "  "+l)
		}
	}
	return ExitOK
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
