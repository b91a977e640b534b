package sessionhook

import (
	"fmt"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/apierror"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/progress"
)

// StopFailure records a turn that ended on an API error (a rate limit, an
// overload, a server error): a WARN-like API_ERROR line in the log, the
// record `harness resume` reads, and the leases of the session's claims
// pushed past the reset time, so the work stays this session's to continue.
// Claude Code ignores its output; the person sees the systemMessage.
func StopFailure(p hook.Payload) hook.Decision {
	c, ok := active(p)
	if !ok {
		return hook.Decision{}
	}
	rt := ReadRuntime(c.root, c.session)
	if stayOut(c, rt, peek(c.root)) {
		return hook.Decision{}
	}
	n := progress.LastSession(c.root)
	if rt != nil && rt.Session > 0 {
		n = rt.Session
	}
	kind := p.Str("error")
	if !plainWord(kind) {
		kind = "unknown"
	}
	details := clip(p.Str("error_details"), 500)
	if details == "" {
		// Claude Code 2.1.3xx leaves error_details empty for a 429; the
		// message it shows (last_assistant_message) quotes the API's text.
		details = clip(p.Str("last_assistant_message"), 500)
	}
	rec := apierror.Record{Time: c.now.UTC().Format(time.RFC3339), SessionID: c.session, Session: n, Kind: kind, Details: details}
	reset, known := apierror.ResetTime(details, c.now)
	if known {
		rec.ResetAt = reset.UTC().Format(time.RFC3339)
	}
	apierror.Write(c.root, rec)

	w := c.worker()
	if known && reset.After(c.now) {
		w.Lease += reset.Sub(c.now) // the claim outlives the wait
	}
	var kept []string
	if renewed, err := w.Renew(""); err == nil {
		for _, t := range renewed {
			kept = append(kept, t.ID+" until "+t.LeaseExpiresAt)
		}
	}
	msg := "turn ended on an API error"
	if details != "" {
		msg += ": " + clip(details, 200)
	}
	if known {
		msg += "; the limit resets at " + rec.ResetAt
	}
	if len(kept) > 0 {
		msg += "; claim kept, lease renewed: " + strings.Join(kept, ", ")
	}
	progress.Append(c.root, progress.Entry{Time: c.now, Session: n, Type: progress.APIError, Category: strings.ToUpper(kind), Message: msg})
	next := "`harness resume` prints the command that continues the job"
	if known {
		next = "`harness resume --wait` continues the job when the limit resets (" + rec.ResetAt + ")"
	}
	return hook.Decision{Kind: hook.Allow, Warning: fmt.Sprintf("harness: the turn ended on an API error (%s); the task stays claimed. %s", kind, next)}
}

// plainWord reports whether s is a short identifier fit for a log line.
func plainWord(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if notWord(r) {
			return false
		}
	}
	return true
}
