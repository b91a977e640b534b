// Package hook is the boundary between Claude Code and the harness: it reads a
// hook's stdin payload tolerantly and renders a decision as exactly the output
// Claude Code expects for the event. Claude Code fails open on a crash, a
// stray line or malformed JSON, so this package never panics, never prints
// more than one JSON object, and turns anything unexpected into a safe
// decision.
package hook

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/jsondepth"
	"github.com/harness-agent/harness/internal/jsonobj"
	"github.com/harness-agent/harness/internal/quiet"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/shortlived"
)

// Events, as Claude Code names them in hook_event_name and hookEventName.
const (
	SessionStart = "SessionStart"
	PreToolUse   = "PreToolUse"
	Stop         = "Stop"
	SubagentStop = "SubagentStop"
	TeammateIdle = "TeammateIdle"
	SessionEnd   = "SessionEnd"
	// UserPromptSubmit runs when a person's prompt starts a turn.
	UserPromptSubmit = "UserPromptSubmit"
	// PostToolUse and PostToolUseFailure run after a tool call succeeded
	// or failed.
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	// PreCompact runs before Claude Code compacts the conversation;
	// StopFailure when a turn ended on an API error (rate limit, overload,
	// …). Neither takes context for the model.
	PreCompact  = "PreCompact"
	StopFailure = "StopFailure"
	// ConfigChange runs when a settings file changed during a session; a
	// block keeps the change from applying to it.
	ConfigChange = "ConfigChange"
)

// Payload is a hook's input. Every accessor is safe on malformed input.
type Payload struct {
	Raw       []byte
	Malformed bool   // stdin was not a JSON object (or one too deep to read)
	Problem   string // why it is Malformed, when that is more than "not a JSON object"
	doc       gjson.Result
}

// Parse parses a payload from bytes.
func Parse(data []byte) Payload {
	p := Payload{Raw: data}
	trimmed := bytes.TrimSpace(data)
	if jsondepth.Exceeds(trimmed, jsondepth.Max) {
		p.Malformed = true
		p.Problem = fmt.Sprintf("the payload nests deeper than %d levels", jsondepth.Max)
		return p
	}
	if !gjson.ValidBytes(trimmed) || len(trimmed) == 0 || trimmed[0] != '{' {
		p.Malformed = true
		return p
	}
	p.doc = gjson.ParseBytes(trimmed)
	return p
}

// Get looks up a gjson path in the payload.
func (p Payload) Get(path string) gjson.Result { return p.doc.Get(path) }

// Str returns a string field, or "" when it is absent or not a string.
func (p Payload) Str(path string) string {
	if r := p.doc.Get(path); r.Type == gjson.String {
		return r.Str
	}
	return ""
}

// Bool returns a boolean field, false unless it is exactly true.
func (p Payload) Bool(path string) bool { return p.doc.Get(path).Type == gjson.True }

// Session returns the id of the Claude Code session the hook runs in: the
// payload's session_id, else $CLAUDE_CODE_SESSION_ID (set for commands a
// session runs), with surrounding space trimmed; "" when neither says.
func (p Payload) Session() string {
	if sid := strings.TrimSpace(p.SessionID()); sid != "" {
		return sid
	}
	return EnvSession()
}

// EnvSession is $CLAUDE_CODE_SESSION_ID trimmed: the session a command run
// from a Claude Code session belongs to.
func EnvSession() string { return strings.TrimSpace(os.Getenv("CLAUDE_CODE_SESSION_ID")) }

// Cwd returns the payload's cwd when it names a directory by an absolute
// path, "" otherwise: a relative path ("42") would be read against the
// hook's own working directory, and a file ("/dev/null"), a missing path
// or an empty one says nothing about where the session works. Callers
// fall back to $CLAUDE_PROJECT_DIR or the process's directory, as when
// the field is absent.
func (p Payload) Cwd() string {
	cwd := p.Str("cwd")
	if !filepath.IsAbs(cwd) {
		return ""
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return ""
	}
	return cwd
}

// Common fields.
func (p Payload) SessionID() string { return p.Str("session_id") }
func (p Payload) Event() string     { return p.Str("hook_event_name") }
func (p Payload) ToolName() string  { return p.Str("tool_name") }

// Kind is what a decision does.
type Kind int

const (
	Silent Kind = iota // no output, exit 0: the harness has nothing to say
	Allow              // proceed, optionally with context or a warning
	Deny               // PreToolUse: the tool call does not run
	Block              // Stop/SubagentStop: the turn continues with Reason
	Refuse             // exit 2 with Reason on stderr (TeammateIdle keeps working)
)

// Decision is what a hook decided, independent of how Claude Code wants it
// spelled.
type Decision struct {
	Kind    Kind
	Reason  string // shown to the model when denying or blocking
	Context string // additionalContext for the model
	Warning string // one line for the user (systemMessage) and stderr
}

// Render writes d for event to stdout/stderr and returns the exit code.
// The JSON is written by hand (internal/jsonobj), members in the order
// encoding/json gives a map's keys, HTML left unescaped: a hook's output is
// what the README shows, byte for byte, without encoding/json's cost at
// the start of every hook.
func Render(event string, d Decision, stdout, stderr io.Writer) int {
	if d.Warning != "" {
		fmt.Fprintln(stderr, d.Warning)
	}
	var decision, permission string
	switch d.Kind {
	case Silent:
		return 0
	case Refuse:
		fmt.Fprintln(stderr, d.Reason)
		return 2
	case Deny:
		permission = "deny"
	case Block:
		decision = "block"
	}
	context := ""
	if d.Context != "" && event != Stop && event != SubagentStop && event != SessionEnd && event != TeammateIdle && event != PreCompact && event != StopFailure && event != ConfigChange {
		context = d.Context
	}
	specific := context != "" || permission != ""
	if decision == "" && !specific && d.Warning == "" {
		return 0
	}
	w := jsonobj.New(false)
	w.SetEscapeHTML(false)
	if decision != "" {
		w.Str("decision", decision)
	}
	if specific {
		w.Open("hookSpecificOutput")
		if context != "" {
			w.Str("additionalContext", context)
		}
		w.Str("hookEventName", event)
		if permission != "" {
			w.Str("permissionDecision", permission)
			w.Str("permissionDecisionReason", d.Reason)
		}
		w.Close()
	}
	if decision != "" {
		w.Str("reason", d.Reason)
	}
	if d.Warning != "" {
		w.Str("systemMessage", d.Warning)
	}
	stdout.Write(append(w.Bytes(), '\n'))
	return 0
}

// Main runs a hook: reads the payload from stdin (quiet.Stdin, read in part
// already where the hook's main imports a rule of internal/quiet), decides
// with fn, renders the decision. A panic inside fn becomes a Silent decision
// plus one stderr line, so a harness bug can never print garbage into
// Claude Code.
func Main(event string, fn func(Payload) Decision) int {
	start := time.Now()
	shortlived.Tune()
	record.Trust()
	p := Parse(quiet.Stdin())
	if os.Getenv("HARNESS_REVIEWER") == "1" {
		// The reviewer (internal/review) is a Claude Code session the
		// harness started to judge a task, not a worker: its run switches
		// hooks off, and should one run anyway it decides nothing.
		debugLog(event, p, Decision{Kind: Silent}, 0, time.Since(start))
		return 0
	}
	d := decide(fn, p)
	code := Render(event, d, os.Stdout, os.Stderr)
	if p.Problem != "" && code == 0 && root.Active(root.Find("")) {
		// Exit 0: stderr is for the person reading the hook's debug output,
		// never parsed by Claude Code. Where the harness is off, a hook
		// stays silent whatever it is given.
		fmt.Fprintf(os.Stderr, "harness: %s payload ignored: %s\n", event, p.Problem)
	}
	debugLog(event, p, d, code, time.Since(start))
	return code
}

func decide(fn func(Payload) Decision, p Payload) (d Decision) {
	defer func() {
		if r := recover(); r != nil {
			d = Decision{Kind: Silent, Warning: fmt.Sprintf("harness: internal error (ignored, the action proceeds): %v", r)}
		}
	}()
	return fn(p)
}

// debugLog appends one JSON line per invocation to $HARNESS_HOOK_LOG.
func debugLog(event string, p Payload, d Decision, code int, took time.Duration) {
	kinds := [...]string{"silent", "allow", "deny", "block", "refuse"}
	quiet.Log(quiet.Entry{Event: event, SessionID: p.SessionID(), Tool: p.ToolName(), Malformed: p.Malformed,
		Decision: kinds[d.Kind], Reason: d.Reason, Context: d.Context, Warning: d.Warning, Exit: code, Took: took})
}
