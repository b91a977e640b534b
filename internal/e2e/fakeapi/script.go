package fakeapi

import (
	"encoding/json"
	"fmt"
)

// Block is one content block of a scripted assistant message: a "text" block
// or a "tool_use" block. Scenario code normally builds blocks through the
// Text, ToolUse, Bash, Write, Edit, ... helpers rather than by hand.
type Block struct {
	// Type is "text" or "tool_use".
	Type string
	// Text is the text of a "text" block.
	Text string
	// ID is the tool_use id; left empty, the server assigns a unique one so
	// that the tool_result in the next request can be matched to it.
	ID string
	// Name is the tool name of a "tool_use" block, e.g. "Bash".
	Name string
	// Input is the tool input of a "tool_use" block. It is sent to the CLI
	// as JSON, split into several input_json_delta events the way the real
	// API streams it.
	Input map[string]any
}

// Turn is one scripted assistant reply to one main-loop request.
//
// A static turn is a list of blocks; its stop_reason is "tool_use" when any
// block is a tool_use (so Claude Code runs the tools and calls back) and
// "end_turn" otherwise. A dynamic turn (see Func and Loop) decides its reply
// from the request it answers, which lets a scenario react to what hooks fed
// back instead of guessing how many requests a hook will cause. A dynamic
// turn's function runs while the server holds its lock: it may use the
// Request it is given but must not call the Server's methods.
type Turn struct {
	// Blocks are the content blocks of the reply, in order.
	Blocks []Block
	// StopReason overrides the derived stop_reason when non-empty (e.g.
	// "max_tokens").
	StopReason string
	// Error, when set, makes the server answer with an HTTP error instead
	// of a message (see APIError).
	Error *HTTPError

	fn   func(*Request) Turn
	loop func(*Request) (Turn, bool)
}

// Text is an assistant message holding a single text block. On its own it
// ends the turn (stop_reason "end_turn"), which makes Claude Code run its
// Stop hooks.
func Text(text string) Turn {
	return Turn{Blocks: []Block{{Type: "text", Text: text}}}
}

// HTTPError is an error answer of the Messages API.
type HTTPError struct {
	Status  int               // HTTP status, e.g. 429
	Type    string            // error.type, e.g. "rate_limit_error"
	Message string            // error.message
	Header  map[string]string // extra response headers, e.g. retry-after
}

// APIError answers the request with an HTTP error, as the real API does
// for a rate limit (429, "rate_limit_error") or an overload (529,
// "overloaded_error"). Claude Code retries such errors unless
// CLAUDE_CODE_MAX_RETRIES=0.
func APIError(status int, errType, message string, header map[string]string) Turn {
	return Turn{Error: &HTTPError{Status: status, Type: errType, Message: message, Header: header}}
}

// ToolUse is an assistant message calling one tool with the given input.
// Claude Code validates input against the tool's schema; a schema error is
// returned to the model as an is_error tool_result, not as a CLI failure.
func ToolUse(name string, input map[string]any) Turn {
	return Turn{Blocks: []Block{{Type: "tool_use", Name: name, Input: input}}}
}

// Bash calls the Bash tool with command (and a short description, as the
// real model always sends one and PreToolUse hooks see it).
func Bash(command string) Turn {
	return ToolUse("Bash", map[string]any{"command": command, "description": "scripted command"})
}

// Write calls the Write tool. path should be absolute: Claude Code rejects
// relative paths for its file tools.
func Write(path, content string) Turn {
	return ToolUse("Write", map[string]any{"file_path": path, "content": content})
}

// Edit calls the Edit tool replacing oldString with newString in path.
// Claude Code refuses to Edit a file the session has neither Read nor
// written, so a scenario editing an existing file sends Read(path) first.
func Edit(path, oldString, newString string) Turn {
	return ToolUse("Edit", map[string]any{"file_path": path, "old_string": oldString, "new_string": newString})
}

// Read calls the Read tool on path.
func Read(path string) Turn {
	return ToolUse("Read", map[string]any{"file_path": path})
}

// Skill calls the Skill tool, the way the model invokes a skill it chose from
// the listing in its context. args may be empty.
func Skill(name, args string) Turn {
	in := map[string]any{"skill": name}
	if args != "" {
		in["args"] = args
	}
	return ToolUse("Skill", in)
}

// Agent calls the Agent (subagent) tool in the foreground
// (run_in_background false; Claude Code 2.1.330 runs agents in the
// background by default). In the foreground the main agent waits, so the
// subagent's requests, which arrive at the same server, take the next turns
// of the script until the subagent ends its turn (firing SubagentStop); the
// main agent's next request then sees the subagent's report as the tool
// result. For background agents use ToolUse and Server.SubagentScript.
func Agent(subagentType, description, prompt string) Turn {
	return ToolUse("Agent", map[string]any{
		"subagent_type":     subagentType,
		"description":       description,
		"prompt":            prompt,
		"run_in_background": false,
	})
}

// Combine concatenates the blocks of several static turns into one assistant
// message, e.g. Combine(Text("Let me check."), Bash("ls")). Several tool_use
// blocks in one message are run by Claude Code, possibly in parallel.
func Combine(turns ...Turn) Turn {
	var out Turn
	for _, t := range turns {
		if t.fn != nil || t.loop != nil {
			panic("fakeapi.Combine: dynamic turns cannot be combined")
		}
		out.Blocks = append(out.Blocks, t.Blocks...)
		if t.StopReason != "" {
			out.StopReason = t.StopReason
		}
	}
	return out
}

// Func is a turn decided when its request arrives: f sees the request (for
// instance the tool_result or hook feedback it carries) and returns the
// static turn to send. It consumes one script slot, like a static turn.
func Func(f func(r *Request) Turn) Turn {
	return Turn{fn: f}
}

// Loop is a turn that stays at the head of the script: every main-loop
// request is answered by f until f reports done, after which the script
// moves on (the reply returned together with done=true is still sent).
// It models "the model keeps trying to stop" against a blocking Stop hook:
//
//	Loop(func(r *Request) (Turn, bool) {
//		return Text("I am done."), !r.LastUserContains("Stop hook feedback:")
//	})
func Loop(f func(r *Request) (reply Turn, done bool)) Turn {
	return Turn{loop: f}
}

// resolve turns a possibly dynamic head of the script into a static reply,
// reporting whether the head is used up.
func (t Turn) resolve(r *Request) (Turn, bool) {
	switch {
	case t.loop != nil:
		reply, done := t.loop(r)
		return reply.static(), done
	case t.fn != nil:
		return t.fn(r).static(), true
	default:
		return t, true
	}
}

// static guards against a Func/Loop returning another dynamic turn, which
// would be ambiguous about how many script slots it uses.
func (t Turn) static() Turn {
	if t.fn != nil || t.loop != nil {
		panic("fakeapi: a Func or Loop turn must return a static turn")
	}
	return t
}

func (t Turn) stopReason() string {
	if t.StopReason != "" {
		return t.StopReason
	}
	for _, b := range t.Blocks {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

// String describes the turn for logs.
func (t Turn) String() string {
	if t.fn != nil {
		return "Func(...)"
	}
	if t.loop != nil {
		return "Loop(...)"
	}
	s := ""
	for i, b := range t.Blocks {
		if i > 0 {
			s += " + "
		}
		switch b.Type {
		case "tool_use":
			in, _ := json.Marshal(b.Input)
			s += fmt.Sprintf("%s(%s)", b.Name, truncate(string(in), 120))
		default:
			s += fmt.Sprintf("Text(%q)", truncate(b.Text, 120))
		}
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
