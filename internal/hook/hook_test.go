package hook

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
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

func TestParseTolerates(t *testing.T) {
	for _, in := range []string{"", "   ", "[1]", "42", `"x"`, "{", "\x00\xff", `{"cwd": 42}`} {
		p := Parse([]byte(in))
		assert.Equal(t, "", p.Cwd(), "%q", in)
		assert.False(t, p.Bool("stop_hook_active"))
	}
	p := Parse([]byte(` {"cwd":"/x","stop_hook_active":true,"tool_input":{"command":"ls"}} `))
	assert.False(t, p.Malformed)
	assert.Equal(t, "/x", p.Cwd())
	assert.True(t, p.Bool("stop_hook_active"))
	assert.Equal(t, "ls", p.Str("tool_input.command"))
}

func TestPanicBecomesSilent(t *testing.T) {
	d := decide(func(Payload) Decision { panic("boom") }, Payload{})
	assert.Equal(t, Silent, d.Kind)
	assert.Contains(t, d.Warning, "internal error")
}
