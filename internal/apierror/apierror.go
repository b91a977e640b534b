// Package apierror keeps the record of the last turn that ended on an API
// error (Claude Code's StopFailure hook): its kind and, when the error said,
// when the limit resets. `harness resume` reads it to say when, and with
// --wait to wait until, the job can continue.
package apierror

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
)

// File, in the runtime directory, records the last turn that ended
// on an API error: its kind and, when the error said, when the limit resets.
// `harness resume` reads it.
const File = "api-error.json"

// Record is the record of a turn that ended on an API error.
type Record struct {
	Time      string `json:"time"`
	SessionID string `json:"session_id,omitempty"`
	Session   int    `json:"session"`
	Kind      string `json:"kind"`              // Claude Code's error kind: rate_limit, overloaded, …
	Details   string `json:"details,omitempty"` // the API's message, clipped
	ResetAt   string `json:"reset_at,omitempty"`
}

// Write stores r in the runtime directory of dir.
func Write(dir string, r Record) error {
	return atomicfile.ReplaceJSON(filepath.Join(dir, root.RuntimeDir, File), r)
}

// Read returns the last API error recorded in the state root dir,
// nil when there is none.
func Read(dir string) *Record {
	data, err := safefile.ReadFile(filepath.Join(dir, root.RuntimeDir, File), safefile.Small)
	if err != nil {
		return nil
	}
	var e Record
	if json.Unmarshal(data, &e) != nil || e.Kind == "" {
		return nil
	}
	return &e
}

// Clear forgets the recorded API error (the job was resumed).
func Clear(dir string) {
	os.Remove(filepath.Join(dir, root.RuntimeDir, File))
}

// Ways an API error message says when a limit resets, tried in order.
// Compiled on first use: hooks compile no regular expression at start.
var resetPatterns = sync.OnceValue(func() [3]*regexp.Regexp {
	return [3]*regexp.Regexp{regexp.MustCompile(resetEpoch), regexp.MustCompile(resetAfter), regexp.MustCompile(resetStamp)}
})

const (
	// "…limit reached|1767225600": Claude Code's usage-limit message
	// carries the reset as Unix seconds after a bar.
	resetEpoch = `\|(\d{10})\b`
	// "retry-after: 120", "retry after 120 seconds", "try again in 120s".
	resetAfter = `(?i)(?:retry[- ]after|try again in)[": ]+(\d{1,6})\s*(s|sec|secs|seconds|m|min|mins|minutes)?\b`
	// "resets at 2026-11-24T18:00:00Z".
	resetStamp = `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)`
)

// ResetTime finds in an API error message when the limit resets. Times
// more than a week away are not believed.
func ResetTime(details string, now time.Time) (time.Time, bool) {
	re := resetPatterns()
	epoch, after, stamp := re[0], re[1], re[2]
	var at time.Time
	if m := epoch.FindStringSubmatch(details); m != nil {
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		at = time.Unix(sec, 0)
	} else if m := after.FindStringSubmatch(details); m != nil {
		n, _ := strconv.Atoi(m[1])
		d := time.Duration(n) * time.Second
		if strings.HasPrefix(strings.ToLower(m[2]), "m") {
			d = time.Duration(n) * time.Minute
		}
		at = now.Add(d)
	} else if m := stamp.FindString(details); m != "" {
		t, err := time.Parse(time.RFC3339, m)
		if err != nil {
			return time.Time{}, false
		}
		at = t
	} else {
		return time.Time{}, false
	}
	if at.Before(now.Add(-time.Hour)) || at.After(now.Add(7*24*time.Hour)) {
		return time.Time{}, false
	}
	return at, true
}
