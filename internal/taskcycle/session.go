package taskcycle

import (
	"fmt"

	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// Opened is what StartSession did.
type Opened struct {
	Session     int  // the new session's number (session_count after the increment)
	OverLimit   bool // past session_config.max_sessions: the session must not work
	Stats       schedule.Stats
	Interrupted []string // tasks in progress that `harness recover` should look at
}

// StartSession opens a session the way the SessionStart hook does for
// Claude Code, for agents that run without the hooks: session_count+1, an
// INIT "Session N started (source=cli)" line, and past max_sessions a STATS
// line and OverLimit. Without it a hook-less agent's `claim` would count
// every session's Starting lines against the first session's
// max_tasks_per_session forever. In exclusive mode another live session
// holding the lock is refused.
func (w *Worker) StartSession() (*Opened, error) {
	now := w.Now()
	o := &Opened{}
	_, err := statecache.Update(w.Root, func(s *state.State) error {
		if err := w.checkSession(s); err != nil {
			return err
		}
		s.SessionCount++
		o.Session = s.SessionCount
		msg := "Session %d started (source=cli)"
		if s.Concurrent() {
			msg = "Session %d started (source=cli, worker=" + w.ID + ")"
		}
		log := []progress.Entry{{Time: now, Session: o.Session, Type: progress.Init, Message: fmt.Sprintf(msg, o.Session)}}
		if s.Config.PastMaxSessions(o.Session) {
			o.OverLimit, o.Stats = true, schedule.Count(s.Tasks)
			log = append(log, progress.Entry{Time: now, Session: o.Session, Type: progress.Stats, Message: o.Stats.Line()})
		}
		mine, expired, _ := w.Interrupted(s)
		for _, t := range append(mine, expired...) {
			o.Interrupted = append(o.Interrupted, t.ID)
		}
		return progress.Append(w.Root, log...)
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}
