package taskcycle

import (
	"context"
	"fmt"
	"os"

	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/review"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/validation"
)

// reviewed reports whether claim t's passing validation goes to the
// reviewer before it counts (its review member, else session_config's).
func reviewed(s *state.State, t *state.Task) bool { return t.Reviewed(s.Config) }

// review is the second gate, after validation r of claim t passed (scope
// included): the reviewer's PASS lets the task complete, its FAIL is a
// failed attempt ([REVIEW], rolled back like any), and no verdict (the
// reviewer missing, crashed, timed out, or answering out of form) is an
// ENV_SETUP error that records nothing: the work was not judged, so no
// attempt is spent and the tree stays as it is. Its spend is added to the
// calling session's budget account either way.
func (w *Worker) review(ctx context.Context, s *state.State, t state.Task, tree Tree, r validation.Result) (*Outcome, error) {
	diff, err := git.DiffSince(tree.Top, t.StartedAtCommit, w.Root)
	if err != nil {
		diff = fmt.Sprintf("(the diff could not be made: %v; read the files)", err)
	}
	cfg := s.Config.Review
	v := review.Run(ctx, review.Options{Program: review.Program(), Dir: tree.Dir, Timeout: cfg.Timeout(), Model: cfg.Model},
		review.Request{TaskID: t.ID, Title: t.Title, Acceptance: t.Acceptance, Command: t.Command, Output: r.Tail,
			Base: t.StartedAtCommit, Diff: diff})
	now := w.Now()
	budget.AddReview(w.Project().Record(), os.Getenv("CLAUDE_CODE_SESSION_ID"), s.SessionCount, v.Took, v.Tokens, v.CostUSD, now)
	w.logLocked(progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Review, TaskID: t.ID,
		Message: fmt.Sprintf("%s (%s, %d tokens, $%.4f): %s", v.Outcome, v.Took.Round(1e6), v.Tokens, v.CostUSD, orDash(v.Reasons))})
	var o *Outcome
	switch v.Outcome {
	case review.Pass:
		o, err = w.record(ctx, s, t, tree, r)
	case review.Fail:
		o, err = w.fail(ctx, t, tree, failure.Review, v.Reasons, true)
		if o != nil {
			o.Check = &r
		}
	default:
		if ctx.Err() != nil {
			return nil, failure.New(failure.TaskExec, "review of %s interrupted: nothing recorded", t.ID).
				WithHint("run `harness validate %s` again", failure.ShellArg(t.ID))
		}
		e := &TaskError{TaskID: t.ID, Err: failure.New(failure.EnvSetup, "validation passed but the reviewer gave no verdict: %s", v.Reasons).
			WithHint("nothing was recorded and no attempt counted: run `harness validate %s` again; if the reviewer keeps failing, a person fixes it (Claude Code installed and logged in, or HARNESS_CLAUDE; session_config.review) or turns it off for the task (`harness edit %s --review off`)",
				failure.ShellArg(t.ID), failure.ShellArg(t.ID))}
		w.logLocked(progress.Entry{Time: w.Now(), Session: s.SessionCount, Type: progress.Error, TaskID: t.ID, Category: failure.EnvSetup, Message: e.Err.Message})
		return nil, e
	}
	if o != nil {
		o.Review = &v
	}
	return o, err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
