package statecache

import (
	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/jsonobj"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
)

// The summary file is written and read by hand (internal/jsonobj), not by
// encoding/json: every Stop and PreToolUse reads it, and encoding/json's
// first use in a process costs more than the rest of such a hook.

// format is the layout of summary.json; a file of another layout (one an
// earlier harness wrote) is stale, so the summary is made again.
const format = 5

// encode is the summary's file text.
func (s *Summary) encode() []byte {
	w := jsonobj.New(false)
	// The key and the session count first: a session's start changes only
	// those, and within the file's first sector the change is written in
	// place (jsonobj.InPlace), not as a new file renamed over it.
	w.Str("key", s.Key)
	w.Int("session_count", int64(s.SessionCount))
	w.Int("format", format)
	w.Bool("concurrent", s.Concurrent)
	w.Open("config")
	writeConfig(w, &s.Config)
	w.Close()
	w.Open("stats")
	writeStats(w, &s.Stats)
	w.Close()
	if s.Next != nil {
		w.Open("next")
		writeBrief(w, *s.Next)
		w.Close()
	}
	w.Int("eligible", int64(s.Eligible))
	if s.Why != "" {
		w.Str("why", s.Why)
	}
	if len(s.InProgress) > 0 {
		w.Objects("in_progress", len(s.InProgress), false, func(i int) { writeClaim(w, &s.InProgress[i]) })
	}
	w.Str("fingerprint", s.Fingerprint)
	if s.DepsClean {
		w.Bool("deps_clean", true)
	}
	if s.NextTask != nil {
		w.Open("next_task")
		state.WriteTask(w, s.NextTask)
		w.Close()
	}
	return w.Bytes()
}

// decode reads a summary encode wrote; nil when data is not one (damaged,
// another layout, a next task that does not parse).
func decode(data []byte) *Summary {
	obj, ok := jsonobj.Read(data)
	if !ok || obj.Get("format").Int() != format {
		return nil
	}
	s := &Summary{}
	var bad bool
	obj.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "key":
			s.Key = v.Str
		case "concurrent":
			s.Concurrent = v.Bool()
		case "config":
			s.Config = readConfig(v)
		case "session_count":
			s.SessionCount = int(v.Int())
		case "stats":
			s.Stats = readStats(v)
		case "next":
			b := readBrief(v)
			s.Next = &b
		case "eligible":
			s.Eligible = int(v.Int())
		case "why":
			s.Why = v.Str
		case "in_progress":
			v.ForEach(func(_, c gjson.Result) bool {
				s.InProgress = append(s.InProgress, readClaim(c))
				return true
			})
		case "fingerprint":
			s.Fingerprint = v.Str
		case "deps_clean":
			s.DepsClean = v.Bool()
		case "next_task":
			t, err := state.ReadTask(v)
			if err != nil {
				bad = true
				return false
			}
			s.NextTask = &t
		}
		return true
	})
	if bad {
		return nil
	}
	return s
}

func writeConfig(w *jsonobj.Writer, c *state.Config) {
	w.Str("concurrency_mode", c.ConcurrencyMode)
	w.Int("max_tasks_per_session", int64(c.MaxTasksPerSession))
	w.Int("max_sessions", int64(c.MaxSessions))
	w.Bool("verify_on_stop", c.VerifyOnStop)
	w.Int("max_reflect_iterations", int64(c.MaxReflectIterations))
	// nil (no policy) and empty (no program allowed) are not the same
	// policy: both are kept, as the tasks file says them.
	w.Strs("allowed_commands", c.AllowedCommands)
	w.Open("budget")
	w.Int("job_minutes", int64(c.Budget.JobMinutes))
	w.Int("session_minutes", int64(c.Budget.SessionMinutes))
	w.Int("job_tokens", int64(c.Budget.JobTokens))
	w.Int("session_tokens", int64(c.Budget.SessionTokens))
	w.Close()
	w.Int("stuck_turns", int64(c.StuckTurns))
	w.Str("integration_branch", c.IntegrationBranch)
	w.Str("integration_check", c.IntegrationCheck)
	w.Int("integration_timeout_seconds", int64(c.IntegrationTimeoutSeconds))
	w.Open("review")
	w.Bool("enabled", c.Review.Enabled)
	w.Int("timeout_seconds", int64(c.Review.TimeoutSeconds))
	w.Str("model", c.Review.Model)
	w.Close()
}

func readConfig(v gjson.Result) state.Config {
	b := v.Get("budget")
	return state.Config{
		ConcurrencyMode:      v.Get("concurrency_mode").Str,
		MaxTasksPerSession:   int(v.Get("max_tasks_per_session").Int()),
		MaxSessions:          int(v.Get("max_sessions").Int()),
		VerifyOnStop:         v.Get("verify_on_stop").Bool(),
		MaxReflectIterations: int(v.Get("max_reflect_iterations").Int()),
		AllowedCommands:      jsonobj.Strs(v.Get("allowed_commands")),
		Budget: state.Budget{
			JobMinutes:     int(b.Get("job_minutes").Int()),
			SessionMinutes: int(b.Get("session_minutes").Int()),
			JobTokens:      int(b.Get("job_tokens").Int()),
			SessionTokens:  int(b.Get("session_tokens").Int()),
		},
		StuckTurns:                int(v.Get("stuck_turns").Int()),
		IntegrationBranch:         v.Get("integration_branch").Str,
		IntegrationCheck:          v.Get("integration_check").Str,
		IntegrationTimeoutSeconds: int(v.Get("integration_timeout_seconds").Int()),
		Review: state.ReviewConfig{
			Enabled:        v.Get("review.enabled").Bool(),
			TimeoutSeconds: int(v.Get("review.timeout_seconds").Int()),
			Model:          v.Get("review.model").Str,
		},
	}
}

func writeStats(w *jsonobj.Writer, st *schedule.Stats) {
	w.Int("total", int64(st.Total))
	w.Int("completed", int64(st.Completed))
	w.Int("failed", int64(st.Failed))
	w.Int("pending", int64(st.Pending))
	w.Int("blocked", int64(st.Blocked))
	w.Int("failed_by_dependency", int64(st.FailedByDependency))
	w.Int("in_progress", int64(st.InProgress))
	w.Int("attempts", int64(st.Attempts))
	w.Int("checkpoints", int64(st.Checkpoints))
}

func readStats(v gjson.Result) schedule.Stats {
	n := func(k string) int { return int(v.Get(k).Int()) }
	return schedule.Stats{Total: n("total"), Completed: n("completed"), Failed: n("failed"), Pending: n("pending"),
		Blocked: n("blocked"), InProgress: n("in_progress"), Attempts: n("attempts"), Checkpoints: n("checkpoints"),
		FailedByDependency: n("failed_by_dependency")}
}

func writeBrief(w *jsonobj.Writer, b Brief) {
	w.Str("id", b.ID)
	w.Str("title", b.Title)
}

func readBrief(v gjson.Result) Brief { return Brief{ID: v.Get("id").Str, Title: v.Get("title").Str} }

func writeClaim(w *jsonobj.Writer, c *Claim) {
	writeBrief(w, c.Brief)
	w.Str("claimed_by", c.ClaimedBy)
	w.Str("lease_expires_at", c.LeaseExpiresAt)
	w.Strs("allowed_paths", c.AllowedPaths)
	w.Str("command", c.Command)
	w.Str("worktree", c.Worktree)
}

func readClaim(v gjson.Result) Claim {
	return Claim{Brief: readBrief(v), ClaimedBy: v.Get("claimed_by").Str, LeaseExpiresAt: v.Get("lease_expires_at").Str,
		AllowedPaths: jsonobj.Strs(v.Get("allowed_paths")), Command: v.Get("command").Str, Worktree: v.Get("worktree").Str}
}
