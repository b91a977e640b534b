package sessionhook

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/apierror"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
)

// StopFailure records a turn that ended on an API error (a rate limit, an
// overload, a server error): a WARN-like API_ERROR line in the log, the
// record `harness resume` reads, and the leases of the session's claims
// pushed past the reset time, so the work stays this session's to continue.
// Claude Code ignores its output; the person sees the systemMessage.
func StopFailure(p hook.Payload) hook.Decision {
	c, ok := active(p)
	if !ok || p.Malformed {
		// A payload that cannot be read tells of no failed turn: nothing to record.
		return hook.Decision{}
	}
	rt := ReadRuntime(c.Record(), c.session)
	if stayOut(c, rt, peek(c.Root)) {
		return hook.Decision{}
	}
	details := p.Str("error_details")
	if details == "" {
		// Claude Code 2.1.3xx leaves error_details empty for a 429; the
		// message it shows (last_assistant_message) quotes the API's text.
		details = p.Str("last_assistant_message")
	}
	return hook.Decision{Kind: hook.Allow, Warning: recordAPIError(c, rt, p.Str("error"), details, false)}
}

// apiErrorWait bounds how long a hook waits for another one recording an
// API error (see recordAPIError): StopFailure's work takes milliseconds, and
// SessionEnd is given 5 s (settings.Hooks).
const apiErrorWait = 2 * time.Second

// recordAPIError is StopFailure's work, shared with SessionEnd (which does
// it when Claude Code exited before the StopFailure hook was done: it does
// not wait for that hook). It returns the warning for the person, and
// records nothing when the error was recorded already in the last minute:
// for the session's end (atEnd), any error of that kind in this session;
// for StopFailure, the same error (SessionEnd got there first).
//
// The two hooks take turns (lock.APIError), and the record is written
// last, once the claim is kept and the line logged: a record seen means the
// work is done, and a hook killed half-way (Claude Code exits without
// waiting for StopFailure) leaves no record, so the session's end does the
// work again. A hook that could not take its turn in time records anyway:
// a repeated line costs less than a lost one.
func recordAPIError(c *call, rt *Runtime, kind, details string, atEnd bool) string {
	if unlock, err := lock.APIError(c.Root, apiErrorWait); err == nil {
		defer unlock()
	}
	n := progress.LastSession(c.Root)
	if rt != nil && rt.Session > 0 {
		n = rt.Session
	}
	if !plainWord(kind) {
		kind = "unknown"
	}
	details = clip(details, 500)
	rec := apierror.Record{Time: c.now.UTC().Format(time.RFC3339), SessionID: c.session, Session: n, Kind: kind, Details: details}
	reset, known := apierror.ResetTime(details, c.now)
	if known {
		rec.ResetAt = reset.UTC().Format(time.RFC3339)
	}
	next := "`harness resume` prints the command that continues the job"
	if known {
		next = "`harness resume --wait` continues the job when the limit resets (" + rec.ResetAt + ")"
	}
	warning := fmt.Sprintf("harness: the turn ended on an API error (%s); the task stays claimed. %s", kind, next)
	if last := apierror.Read(c.Root); last != nil && last.SessionID == rec.SessionID && last.Kind == rec.Kind && (atEnd || last.Details == rec.Details) {
		if at, err := time.Parse(time.RFC3339, last.Time); err == nil && c.now.Sub(at) < time.Minute {
			return warning
		}
	}

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
	progress.Append(c.Root, progress.Entry{Time: c.now, Session: n, Type: progress.APIError, Category: strings.ToUpper(kind), Message: msg})
	apierror.Write(c.Root, rec)
	return warning
}

// transcriptAPIError reads the last assistant message of the transcript at
// path: when Claude Code wrote it for an API error (isApiErrorMessage), it
// returns the error's kind and the text shown to the person.
func transcriptAPIError(path string) (kind, details string, ok bool) {
	f, size, ok := openTranscript(path)
	if !ok {
		return "", "", false
	}
	defer f.Close()
	const tail = 256 << 10
	off := max(size-tail, 0)
	buf := make([]byte, size-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return "", "", false
	}
	lines := bytes.Split(bytes.TrimRight(buf, "\n"), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if i == 0 && off > 0 {
			break // cut by the tail read
		}
		line := lines[i]
		if !gjson.ValidBytes(line) || gjson.GetBytes(line, "type").Str != "assistant" {
			continue
		}
		if !gjson.GetBytes(line, "isApiErrorMessage").Bool() {
			return "", "", false
		}
		return gjson.GetBytes(line, "error").Str, gjson.GetBytes(line, "message.content.0.text").Str, true
	}
	return "", "", false
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
