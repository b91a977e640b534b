package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// writeMessage answers a /v1/messages request with reply, as server-sent
// events when the request asked to stream (the agent loop always does) and
// as one JSON message otherwise.
func (s *Server) writeMessage(w http.ResponseWriter, r *Request, msgID string, reply Turn) {
	model := r.Model()
	if model == "" {
		model = "claude-fake"
	}
	inTok := approxTokens(r.Body)
	outTok := 0
	content := make([]map[string]any, 0, len(reply.Blocks))
	for _, b := range reply.Blocks {
		switch b.Type {
		case "tool_use":
			in := b.Input
			if in == nil {
				in = map[string]any{}
			}
			content = append(content, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": in})
			js, _ := json.Marshal(in)
			outTok += len(js)/4 + 1
		default:
			content = append(content, map[string]any{"type": "text", "text": b.Text})
			outTok += len(b.Text)/4 + 1
		}
	}
	usage := map[string]any{
		"input_tokens":                inTok,
		"output_tokens":               outTok,
		"cache_creation_input_tokens": 0,
		"cache_read_input_tokens":     0,
	}

	if !r.Stream() {
		writeJSON(w, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": reply.stopReason(), "stop_sequence": nil,
			"usage": usage,
		})
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) {
		js, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, js)
		if flusher != nil {
			flusher.Flush()
		}
	}

	startUsage := map[string]any{
		"input_tokens":                inTok,
		"output_tokens":               1,
		"cache_creation_input_tokens": 0,
		"cache_read_input_tokens":     0,
	}
	send("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": startUsage,
		},
	})
	send("ping", map[string]any{"type": "ping"})
	for i, b := range reply.Blocks {
		switch b.Type {
		case "tool_use":
			send("content_block_start", map[string]any{
				"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}},
			})
			in := b.Input
			if in == nil {
				in = map[string]any{}
			}
			js, _ := json.Marshal(in)
			// Several partial chunks, cut anywhere, as the real API
			// does: the CLI must reassemble them.
			for _, part := range chunks(string(js), 3) {
				send("content_block_delta", map[string]any{
					"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": part},
				})
			}
		default:
			send("content_block_start", map[string]any{
				"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""},
			})
			for _, part := range chunks(b.Text, 2) {
				send("content_block_delta", map[string]any{
					"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": part},
				})
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": reply.stopReason(), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": outTok},
	})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// chunks cuts s into at most n non-empty pieces on rune boundaries (one
// empty piece for an empty s, so a block always has a delta).
func chunks(s string, n int) []string {
	rs := []rune(s)
	if len(rs) == 0 {
		return []string{""}
	}
	size := (len(rs) + n - 1) / n
	var out []string
	for i := 0; i < len(rs); i += size {
		j := min(i+size, len(rs))
		out = append(out, string(rs[i:j]))
	}
	return out
}
