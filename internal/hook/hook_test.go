package hook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name, event string
		d           Decision
		stdout      string
		stderr      string
		code        int
	}{
		{"silent", PreToolUse, Decision{}, "", "", 0},
		{"deny", PreToolUse, Decision{Kind: Deny, Reason: "no && never"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no && never"}}` + "\n", "", 0},
		{"deny with context", PreToolUse, Decision{Kind: Deny, Reason: "r", Context: "c"},
			`{"hookSpecificOutput":{"additionalContext":"c","hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}` + "\n", "", 0},
		{"nudge", PreToolUse, Decision{Kind: Allow, Context: "careful"},
			`{"hookSpecificOutput":{"additionalContext":"careful","hookEventName":"PreToolUse"}}` + "\n", "", 0},
		{"stop block", Stop, Decision{Kind: Block, Reason: "next=task-001"},
			`{"decision":"block","reason":"next=task-001"}` + "\n", "", 0},
		{"subagent block", SubagentStop, Decision{Kind: Block, Reason: "r"}, `{"decision":"block","reason":"r"}` + "\n", "", 0},
		{"session start context", SessionStart, Decision{Kind: Allow, Context: "HARNESS"},
			`{"hookSpecificOutput":{"additionalContext":"HARNESS","hookEventName":"SessionStart"}}` + "\n", "", 0},
		{"allowed stop with a warning", Stop, Decision{Kind: Allow, Warning: "WARN valve"},
			`{"systemMessage":"WARN valve"}` + "\n", "WARN valve\n", 0},
		{"teammate refuse", TeammateIdle, Decision{Kind: Refuse, Reason: "keep working on task-002"},
			"", "keep working on task-002\n", 2},
		{"context is not a Stop field", Stop, Decision{Kind: Allow, Context: "ignored"}, "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Render(tt.event, tt.d, &out, &errb)
			assert.Equal(t, tt.code, code)
			assert.Equal(t, tt.stdout, out.String())
			assert.Equal(t, tt.stderr, errb.String())
		})
	}
}

// TestCwdOnlyADirectory: a cwd that is empty, relative, missing or not a
// directory is no cwd.
func TestCwdOnlyADirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for cwd, want := range map[string]string{"": "", "42": "", ".": "", "/dev/null": "", file: "", filepath.Join(dir, "gone"): "", dir: dir} {
		assert.Equal(t, want, Parse([]byte(`{"cwd":"`+cwd+`"}`)).Cwd(), "%q", cwd)
	}
}

func TestParseTolerates(t *testing.T) {
	for _, in := range []string{"", "   ", "[1]", "42", `"x"`, "{", "\x00\xff", `{"cwd": 42}`} {
		p := Parse([]byte(in))
		assert.Equal(t, "", p.Cwd(), "%q", in)
		assert.False(t, p.Bool("stop_hook_active"))
	}
	dir := t.TempDir()
	p := Parse([]byte(` {"cwd":"` + dir + `","stop_hook_active":true,"tool_input":{"command":"ls"}} `))
	assert.False(t, p.Malformed)
	assert.Equal(t, dir, p.Cwd())
	assert.True(t, p.Bool("stop_hook_active"))
	assert.Equal(t, "ls", p.Str("tool_input.command"))
}

func TestPanicBecomesSilent(t *testing.T) {
	d := decide(func(Payload) Decision { panic("boom") }, Payload{})
	assert.Equal(t, Silent, d.Kind)
	assert.Contains(t, d.Warning, "internal error")
}

// FuzzParse feeds arbitrary stdin to the payload parser and its accessors,
// and renders a decision carrying what they returned: no input may panic,
// make an accessor return a value of the wrong type, or yield output that is
// not one JSON object. It runs no hook, so it explores fast:
// `go test -fuzz=FuzzParse ./internal/hook`.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", " ", "{}", "null", "[]", "[1]", `"x"`, "42", "{", "}", "\x00\xff\xfe", "\xef\xbb\xbf{}",
		`{"session_id":"s","cwd":"/tmp","hook_event_name":"Stop","stop_hook_active":true}`,
		`{"cwd":42,"session_id":{"a":1},"stop_hook_active":"true","tool_name":["Bash"]}`,
		`{"tool_input":{"command":"rm -rf /","file_path":null},"tool_name":"Bash"}`,
		`{"a":1,"a":2,"cwd":"/x","cwd":7}`,
		`{"cwd":"\u0000\ud800","session_id":"` + "\u2028" + `"}`,
		` {"stop_hook_active":true} trailing`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := Parse(data)
		if p.Malformed && (p.SessionID() != "" || p.Cwd() != "" || p.Bool("stop_hook_active")) {
			t.Fatalf("a malformed payload has fields: %q", data)
		}
		for _, path := range []string{"cwd", "session_id", "hook_event_name", "tool_name", "source", "tool_input.command", "tool_input.file_path", "tool_input.edits.0.new_string", "a.b.c", ""} {
			if r := p.Get(path); p.Str(path) != "" && r.Type != gjson.String {
				t.Fatalf("Str(%q) is %q for a %s", path, p.Str(path), r.Type)
			}
			if p.Bool(path) && p.Get(path).Type != gjson.True {
				t.Fatalf("Bool(%q) is true for %s", path, p.Get(path).Raw)
			}
		}
		d := Decision{Kind: Block, Reason: p.Str("tool_input.command") + p.Cwd(), Context: p.SessionID(), Warning: p.Event() + p.ToolName()}
		for _, event := range []string{PreToolUse, Stop, SessionStart, TeammateIdle} {
			var out, errb bytes.Buffer
			code := Render(event, d, &out, &errb)
			if code != 0 {
				t.Fatalf("%s: exit %d", event, code)
			}
			dec := json.NewDecoder(&out)
			var v map[string]any
			if err := dec.Decode(&v); err != nil || dec.More() {
				t.Fatalf("%s: stdout is not one JSON object: %q (%v)", event, out.String(), err)
			}
		}
	})
}

func TestSessionFromPayloadElseEnvironment(t *testing.T) {
	tests := []struct{ name, payload, env, want string }{
		{"payload", `{"session_id":"abc"}`, "env", "abc"},
		{"payload trimmed", `{"session_id":" abc\n"}`, "env", "abc"},
		{"environment", `{}`, " env ", "env"},
		{"blank payload", `{"session_id":"  "}`, "env", "env"},
		{"neither", `{}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CLAUDE_CODE_SESSION_ID", tt.env)
			assert.Equal(t, tt.want, Parse([]byte(tt.payload)).Session())
		})
	}
}

// renderWithMaps is how Render spelled its JSON before it wrote it by hand:
// maps through encoding/json, HTML left unescaped. Render must say the
// same, byte for byte.
func renderWithMaps(event string, d Decision) string {
	out, specific := map[string]any{}, map[string]any{}
	switch d.Kind {
	case Silent, Refuse:
		return ""
	case Deny:
		specific["permissionDecision"] = "deny"
		specific["permissionDecisionReason"] = d.Reason
	case Block:
		out["decision"] = "block"
		out["reason"] = d.Reason
	}
	if d.Context != "" && event != Stop && event != SubagentStop && event != SessionEnd && event != TeammateIdle && event != PreCompact && event != StopFailure {
		specific["additionalContext"] = d.Context
	}
	if len(specific) > 0 {
		specific["hookEventName"] = event
		out["hookSpecificOutput"] = specific
	}
	if d.Warning != "" {
		out["systemMessage"] = d.Warning
	}
	if len(out) == 0 {
		return ""
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(out)
	return buf.String()
}

func TestRenderIsEncodingJSONs(t *testing.T) {
	texts := []string{"", "plain", "a && b < c > d", "line\nbreak \"quoted\" \\ tab\t", "\u2028 é \xff"}
	for _, event := range []string{SessionStart, PreToolUse, Stop, SubagentStop, TeammateIdle, SessionEnd, UserPromptSubmit, PostToolUse, PreCompact, StopFailure} {
		for kind := Silent; kind <= Refuse; kind++ {
			for _, reason := range texts[:2] {
				for _, context := range texts {
					for _, warning := range texts {
						d := Decision{Kind: kind, Reason: reason + context, Context: context, Warning: warning}
						var out, errb bytes.Buffer
						Render(event, d, &out, &errb)
						assert.Equal(t, renderWithMaps(event, d), out.String(), "%s %+v", event, d)
					}
				}
			}
		}
	}
}
