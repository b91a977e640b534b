package fakeapi

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Request is one HTTP request the CLI made to the fake server, kept verbatim
// and parsed just enough for scenario assertions. The raw Body stays the
// source of truth: the parsed views only cover the fields tests look at.
type Request struct {
	// Index is the request's position among all requests (main and side) the
	// server received, from 0.
	Index int
	// Method, Path and Query are the HTTP method, URL path and raw query.
	// Claude Code posts to "/v1/messages" with query "beta=true".
	Method, Path, Query string
	// Header holds the request headers (x-api-key, anthropic-beta,
	// X-Claude-Code-Session-Id, ...).
	Header http.Header
	// Body is the raw request body.
	Body json.RawMessage
	// Main is true for a request of the agent loop (the main agent or a
	// subagent) that consumed a script turn; false for side requests
	// (count_tokens, title or summary generation, unknown endpoints).
	Main bool
	// Reply is the script turn that answered a main request (zero for side
	// requests).
	Reply Turn

	parsed messagesBody
}

// messagesBody is the subset of the Messages API request body the server
// looks at.
type messagesBody struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"`
	Messages []Message       `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// Message is one entry of the request's "messages" array. Content given by
// the CLI as a plain string is normalised to a single text block.
type Message struct {
	Role    string
	Content []ContentBlock
}

// UnmarshalJSON accepts both the string and the block-array form of content.
func (m *Message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	blocks, err := parseContent(raw.Content)
	m.Content = blocks
	return err
}

// Text is the human-readable text of the message: its text blocks and the
// text of its tool_result blocks, joined by newlines.
func (m Message) Text() string {
	var parts []string
	for _, b := range m.Content {
		if t := b.AllText(); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// ContentBlock is one block of a message's content. Only the fields of its
// Type are set.
type ContentBlock struct {
	Type string `json:"type"`
	// Text of a "text" block.
	Text string `json:"text,omitempty"`
	// ID, Name and Input of a "tool_use" block.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content and IsError of a "tool_result" block. Content is
	// either a JSON string or an array of blocks: use ResultText.
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// ResultText is the text of a tool_result block, whichever form its content
// takes.
func (b ContentBlock) ResultText() string {
	if len(b.Content) == 0 {
		return ""
	}
	inner, err := parseContent(b.Content)
	if err != nil {
		return string(b.Content)
	}
	var parts []string
	for _, c := range inner {
		if t := c.AllText(); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// AllText is the block's readable text: Text for text blocks, ResultText for
// tool_result blocks, the raw input for tool_use blocks.
func (b ContentBlock) AllText() string {
	switch b.Type {
	case "text":
		return b.Text
	case "tool_result":
		return b.ResultText()
	case "tool_use":
		return b.Name + " " + string(b.Input)
	}
	return ""
}

func parseContent(raw json.RawMessage) ([]ContentBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []ContentBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []ContentBlock
	err := json.Unmarshal(raw, &blocks)
	return blocks, err
}

// ToolResult is a tool_result block as seen by the model in a later request.
type ToolResult struct {
	ToolUseID string
	IsError   bool
	Text      string
}

// compactionMarker starts the instruction Claude Code appends to the
// conversation when it asks the model for a compaction summary (2.1.330).
const compactionMarker = "Your task is to create a detailed summary of the conversation so far"

// IsCompaction reports whether the request is a compaction (/compact or
// auto-compact) summary request rather than an agent-loop turn.
func (r *Request) IsCompaction() bool {
	return strings.Contains(r.LastUser().Text(), compactionMarker)
}

// SessionID is the X-Claude-Code-Session-Id header: the CLI session that
// sent the request (the session_id hooks see).
func (r *Request) SessionID() string { return r.Header.Get("X-Claude-Code-Session-Id") }

// AgentID is the X-Claude-Code-Agent-Id header, set only on requests of a
// subagent (the agent_id its SubagentStop hook sees); "" for the main agent.
func (r *Request) AgentID() string { return r.Header.Get("X-Claude-Code-Agent-Id") }

// IsSubagent reports whether a subagent sent the request.
func (r *Request) IsSubagent() bool { return r.AgentID() != "" }

// Model is the "model" field of the request.
func (r *Request) Model() string { return r.parsed.Model }

// Stream reports whether the request asked for server-sent events.
func (r *Request) Stream() bool { return r.parsed.Stream }

// Messages is the request's conversation, oldest first.
func (r *Request) Messages() []Message { return r.parsed.Messages }

// ToolNames lists the tools offered to the model, in request order.
func (r *Request) ToolNames() []string {
	var out []string
	for _, t := range r.parsed.Tools {
		out = append(out, t.Name)
	}
	return out
}

// SystemText is the top-level "system" prompt, text blocks joined.
func (r *Request) SystemText() string {
	blocks, err := parseContent(r.parsed.System)
	if err != nil {
		return string(r.parsed.System)
	}
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// Text is every readable string of the request (system prompt and all
// messages, tool results included), joined by newlines. Unlike the raw body,
// it has JSON escapes decoded, so "Stop hook feedback:\nreason" can be
// searched as written.
func (r *Request) Text() string {
	parts := []string{r.SystemText()}
	for _, m := range r.parsed.Messages {
		parts = append(parts, m.Text())
	}
	return strings.Join(parts, "\n")
}

// Contains reports whether s occurs anywhere in Text.
func (r *Request) Contains(s string) bool { return strings.Contains(r.Text(), s) }

// LastUser is the last message with role "user": what the CLI added since
// the previous assistant turn (tool results, hook feedback, reminders).
func (r *Request) LastUser() Message {
	for i := len(r.parsed.Messages) - 1; i >= 0; i-- {
		if r.parsed.Messages[i].Role == "user" {
			return r.parsed.Messages[i]
		}
	}
	return Message{}
}

// NewText is the text of every message after the last assistant message:
// what this request adds to the conversation. Claude Code may add several
// user or system messages at once (e.g. a tool result and a hook's system
// reminder), so this is wider than LastUser.
func (r *Request) NewText() string {
	start := 0
	for i := len(r.parsed.Messages) - 1; i >= 0; i-- {
		if r.parsed.Messages[i].Role == "assistant" {
			start = i + 1
			break
		}
	}
	var parts []string
	for _, m := range r.parsed.Messages[start:] {
		parts = append(parts, m.Text())
	}
	return strings.Join(parts, "\n")
}

// LastUserContains reports whether s occurs in NewText, i.e. in what the CLI
// sent since the previous assistant turn.
func (r *Request) LastUserContains(s string) bool { return strings.Contains(r.NewText(), s) }

// ToolResults lists every tool_result block in the conversation, oldest
// first.
func (r *Request) ToolResults() []ToolResult {
	var out []ToolResult
	for _, m := range r.parsed.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				out = append(out, ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Text: b.ResultText()})
			}
		}
	}
	return out
}

// LastToolResults lists the tool_result blocks sent since the previous
// assistant turn: the results of the tools that turn called.
func (r *Request) LastToolResults() []ToolResult {
	start := 0
	for i := len(r.parsed.Messages) - 1; i >= 0; i-- {
		if r.parsed.Messages[i].Role == "assistant" {
			start = i + 1
			break
		}
	}
	var out []ToolResult
	for _, m := range r.parsed.Messages[start:] {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				out = append(out, ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Text: b.ResultText()})
			}
		}
	}
	return out
}
