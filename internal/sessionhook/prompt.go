package sessionhook

import (
	"strings"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/jsonobj"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/safefile"
)

// Turn is what UserPromptSubmit records of the prompt that started a
// session's current turn, in <root>/.harness-runtime/turn-<id>.json, so that
// Stop knows what the turn was asked for. The transcript cannot tell it:
// Claude Code writes the transcript behind the hooks, and a short turn
// reaches Stop before its own prompt is in the file.
type Turn struct {
	PromptID string `json:"prompt_id"`
	// AskOnly is the /harness sub-command the prompt asked for when it is
	// one of askOnly (a question about the job, not a request for work on
	// it), "" for any other prompt.
	AskOnly string `json:"ask_only,omitempty"`
}

// UserPromptSubmit records the turn's prompt for Stop (see Turn). It never
// blocks a prompt and prints nothing.
func UserPromptSubmit(p hook.Payload) hook.Decision {
	c, ok := locate(p)
	if !ok {
		return hook.Decision{}
	}
	if !c.Active() {
		c.settleOff()
		return hook.Decision{}
	}
	t := Turn{PromptID: p.Str("prompt_id"), AskOnly: askOnlyCommand(p.Str("prompt"))}
	atomicfile.ReplaceSmall(c.Record().SessionFile(turnPrefix, c.session), t.encode())
	return hook.Decision{}
}

// encode is the turn file's text (the layout json.MarshalIndent gives
// the struct; see Runtime.encode for why by hand).
func (t Turn) encode() []byte {
	w := jsonobj.New(true)
	w.Str("prompt_id", t.PromptID)
	strOmit(w, "ask_only", t.AskOnly)
	return w.Bytes()
}

// readTurn returns the recorded turn of session sessionID; ok is false
// when there is none (the hook is not registered, or predates the session).
func readTurn(rec record.Record, sessionID string) (t Turn, ok bool) {
	data, err := safefile.ReadFile(rec.SessionFile(turnPrefix, sessionID), safefile.Small)
	if err != nil {
		return Turn{}, false
	}
	obj, ok := jsonobj.Read(data)
	if !ok {
		return Turn{}, false
	}
	return Turn{PromptID: obj.Get("prompt_id").Str, AskOnly: obj.Get("ask_only").Str}, true
}

// askedOnly returns the /harness sub-command the current turn asked for when
// it is one of askOnly, "" otherwise. The record UserPromptSubmit made for
// this very prompt decides; only without one (an install without that hook,
// or a Claude Code that sends no prompt_id) is the transcript read.
func (c *call) askedOnly() string {
	id := c.p.Str("prompt_id")
	if t, ok := readTurn(c.Record(), c.session); ok && id != "" && t.PromptID == id {
		return t.AskOnly
	}
	return askedOnlyFromTranscript(c.p.Str("transcript_path"))
}

// askOnlyCommand returns the sub-command of a prompt that is `/harness CMD`
// (or `/PLUGIN:harness CMD`) with CMD one of askOnly, "" for any other text.
func askOnlyCommand(text string) string {
	fields := strings.Fields(text)
	if len(fields) < 2 {
		return ""
	}
	name, ok := strings.CutPrefix(fields[0], "/")
	if ok && (name == "harness" || strings.HasSuffix(name, ":harness")) && askOnly(fields[1]) {
		return fields[1]
	}
	return ""
}

// settleOff records that the hooks are off when a session or a turn begins
// without .harness-active (integrity.SettleOff). A marker removed by a tool
// call of the turn is still put back.
func (c *call) settleOff() { integrity.SettleOff(c.Project) }
