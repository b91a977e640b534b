package sessionhook

import (
	"fmt"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// spend brings the session's account of time and tokens up to date and
// measures it against session_config's budget. over is the note that lets
// the session stop when a limit is reached ("" when none is); near warns,
// once per limit and session, at budget.WarnAt of a limit.
func (c *call) spend(n int, sum *statecache.Summary) (over, near string) {
	account := budget.Observe(c.Record(), c.session, n, c.p.Str("transcript_path"), c.now)
	b := sum.Config.Budget
	if !b.Any() {
		return "", ""
	}
	var job budget.Job
	if b.JobMinutes+b.JobTokens > 0 {
		job = budget.Total(c.Record(), account)
	}
	lines := budget.Measure(b, job, account)
	if reached := budget.Over(lines); len(reached) > 0 {
		text := "budget " + budget.Join(reached)
		progress.Append(c.Root, progress.Entry{Time: c.now, Session: n, Type: progress.Stop, Message: text})
		return "STOP " + text + ". The session may stop although work remains; a person raises the limit (`harness budget`) to go on.", ""
	}
	var warned []string
	for _, l := range budget.Near(lines) {
		if account.Warn(c.Record(), l.Name) {
			warned = append(warned, l.String())
		}
	}
	if len(warned) == 0 {
		return "", ""
	}
	msg := "budget nearly spent: " + strings.Join(warned, "; ")
	logWarn(c.Root, n, c.now, "%s", msg)
	return "", "WARN: harness " + msg
}

// Stuck counts the turns a session ended without progress: no commit, no
// checkpoint, no validation outcome. Unlike the stop valve it counts every
// turn end with work remaining, allowed or blocked, so a session that keeps
// ending turns some other way (background tasks that wake it, a loop of
// tool calls that resets Claude Code's own block count) still comes to an
// end.
type Stuck struct {
	Turns  int    `json:"turns"`
	Mark   string `json:"mark,omitempty"`  // the progress at the first of those turns
	Since  string `json:"since,omitempty"` // when that progress was last seen to change
	Warned bool   `json:"warned,omitempty"`
}

// stuckLimit is session_config.stuck_turns, with its default.
func stuckLimit(cfg state.Config) int {
	if cfg.StuckTurns > 0 {
		return cfg.StuckTurns
	}
	return state.DefaultStuckTurns
}

// stuck counts this turn end. At the limit it says so once, with the
// evidence, in a block; at the next turn end still without progress it lets
// the session stop with a WARN stuck line. ok is false while the count is
// below the limit: the caller decides as usual.
func (c *call) stuck(rt *Runtime, n int, sum *statecache.Summary) (d hook.Decision, ok bool) {
	head := git.HeadMark(c.cwd())
	mark := sum.Fingerprint + " head=" + head
	if rt.Stuck.Mark != mark {
		rt.Stuck = Stuck{Mark: mark, Since: c.now.UTC().Format(time.RFC3339)}
	}
	rt.Stuck.Turns++
	limit := stuckLimit(sum.Config)
	if rt.Stuck.Turns < limit {
		return hook.Decision{}, false
	}
	evidence := fmt.Sprintf("%d turns without a commit, a checkpoint or a validation outcome since %s (%s; git HEAD %s)",
		rt.Stuck.Turns, rt.Stuck.Since, sum.Fingerprint, headWord(head))
	if !rt.Stuck.Warned {
		rt.Stuck.Warned = true
		return blockOrValve(c, rt, n, sum, "HARNESS: this session looks stuck: "+evidence+
			".\nDo not repeat what has not worked. Make one concrete step that the harness records (`harness checkpoint`, `harness validate`), or, if you cannot, say in one paragraph what blocks you and end the turn: the harness then lets the session stop."), true
	}
	logWarn(c.Root, n, c.now, "stuck: %s; the session may stop", evidence)
	rt.Stuck = Stuck{}
	return allowStop(c, rt, n, sum.Stats, "WARN: harness: the session is stuck ("+evidence+"); it may stop, a new session resumes the work"), true
}

func headWord(mark string) string {
	if mark == "" {
		return "none (no repository)"
	}
	f := strings.Fields(mark)
	h := f[len(f)-1]
	if len(h) > 12 {
		h = h[:12]
	}
	return "unchanged at " + h
}
