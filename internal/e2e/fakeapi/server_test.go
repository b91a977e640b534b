package fakeapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// These tests check the fake's wire format and script bookkeeping without
// the CLI, so a broken fake is caught even where Claude Code is not
// installed. The e2e smoke tests prove the real CLI accepts the format.

type sseEvent struct {
	name string
	data map[string]any
}

func post(t *testing.T, s *Server, path string, body any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if d["type"] != name {
				t.Errorf("event %q carries data of type %v", name, d["type"])
			}
			out = append(out, sseEvent{name, d})
		}
	}
	return out
}

func mainBody(messages ...map[string]any) map[string]any {
	return map[string]any{
		"model":    "claude-test",
		"stream":   true,
		"tools":    []any{map[string]any{"name": "Bash"}},
		"messages": messages,
	}
}

func TestStreamsToolUse(t *testing.T) {
	s := New(t, Combine(Text("running"), Bash("echo hi")))
	resp := post(t, s, "/v1/messages?beta=true", mainBody(map[string]any{"role": "user", "content": "go"}))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	evs := readSSE(t, resp.Body)
	var names []string
	var partial, text string
	var toolStart map[string]any
	for _, e := range evs {
		names = append(names, e.name)
		if e.name == "content_block_start" {
			if cb := e.data["content_block"].(map[string]any); cb["type"] == "tool_use" {
				toolStart = cb
			}
		}
		if e.name == "content_block_delta" {
			d := e.data["delta"].(map[string]any)
			switch d["type"] {
			case "input_json_delta":
				partial += d["partial_json"].(string)
			case "text_delta":
				text += d["text"].(string)
			}
		}
	}
	want := "message_start ping content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if text != "running" {
		t.Errorf("text = %q", text)
	}
	var in map[string]any
	if err := json.Unmarshal([]byte(partial), &in); err != nil || in["command"] != "echo hi" {
		t.Errorf("reassembled input %q: %v", partial, err)
	}
	if toolStart["name"] != "Bash" || !strings.HasPrefix(toolStart["id"].(string), "toolu_") {
		t.Errorf("tool_use start = %v", toolStart)
	}
	md := evs[len(evs)-2].data["delta"].(map[string]any)
	if md["stop_reason"] != "tool_use" {
		t.Errorf("stop_reason = %v", md["stop_reason"])
	}
}

func TestSideRequestsDoNotConsumeScript(t *testing.T) {
	s := New(t, Text("scripted"))
	// No tools: a title/summary side request.
	resp := post(t, s, "/v1/messages?beta=true", map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "title?"}}})
	var msg map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if c := msg["content"].([]any)[0].(map[string]any); c["text"] != SideText {
		t.Errorf("side reply = %v", c)
	}
	// Compaction: tools present, but the summary instruction last.
	compact := mainBody(map[string]any{"role": "user", "content": "CRITICAL: Respond with TEXT ONLY.\n" + compactionMarker + "."})
	compact["stream"] = false
	resp = post(t, s, "/v1/messages?beta=true", compact)
	msg = nil
	_ = json.NewDecoder(resp.Body).Decode(&msg)
	if c := msg["content"].([]any)[0].(map[string]any); c["text"] != CompactSummary {
		t.Errorf("compaction reply = %v", c)
	}
	resp = post(t, s, "/v1/messages/count_tokens?beta=true", mainBody())
	msg = nil
	_ = json.NewDecoder(resp.Body).Decode(&msg)
	if _, ok := msg["input_tokens"]; !ok {
		t.Errorf("count_tokens reply = %v", msg)
	}
	if s.Remaining() != 1 || len(s.MainRequests()) != 0 || len(s.AllRequests()) != 3 {
		t.Errorf("remaining=%d main=%d all=%d", s.Remaining(), len(s.MainRequests()), len(s.AllRequests()))
	}
}

func TestLoopFuncAndExhaustion(t *testing.T) {
	calls := 0
	s := New(t,
		Loop(func(r *Request) (Turn, bool) {
			calls++
			return Text("trying"), !r.LastUserContains("Stop hook feedback:")
		}),
		Func(func(r *Request) Turn { return Text("saw " + r.LastUser().Text()) }),
	)
	send := func(content string) string {
		body := mainBody(map[string]any{"role": "user", "content": content})
		body["stream"] = false
		resp := post(t, s, "/v1/messages", body)
		var msg map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&msg)
		return msg["content"].([]any)[0].(map[string]any)["text"].(string)
	}
	for _, in := range []string{"Stop hook feedback:\nno", "Stop hook feedback:\nstill no"} {
		if got := send(in); got != "trying" {
			t.Fatalf("loop reply %q", got)
		}
	}
	if got := send("fine"); got != "trying" {
		t.Fatalf("loop's last reply %q", got)
	}
	if got := send("hello"); got != "saw hello" {
		t.Errorf("func reply %q", got)
	}
	if got := send("more"); got != FinalText {
		t.Errorf("exhausted reply %q", got)
	}
	if calls != 3 || s.CountNew("Stop hook feedback:") != 2 || s.Remaining() != 0 {
		t.Errorf("calls=%d countNew=%d remaining=%d", calls, s.CountNew("Stop hook feedback:"), s.Remaining())
	}
}

func TestRequestParsing(t *testing.T) {
	s := New(t)
	body := mainBody(
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "do it"}}},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Bash", "input": map[string]any{"command": "x"}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "is_error": true,
			"content": []any{map[string]any{"type": "text", "text": "PreToolUse:Bash hook error: nope"}}}}},
		map[string]any{"role": "system", "content": "a reminder"},
	)
	body["system"] = []any{map[string]any{"type": "text", "text": "sys prompt"}}
	post(t, s, "/v1/messages?beta=true", body)
	r := s.Last()
	trs := r.LastToolResults()
	if len(trs) != 1 || !trs[0].IsError || trs[0].Text != "PreToolUse:Bash hook error: nope" {
		t.Errorf("tool results %+v", trs)
	}
	if !r.LastUserContains("a reminder") || r.LastUserContains("do it") || !r.Contains("do it") {
		t.Errorf("NewText = %q", r.NewText())
	}
	if r.SystemText() != "sys prompt" || r.Model() != "claude-test" || r.ToolNames()[0] != "Bash" {
		t.Errorf("system=%q model=%q tools=%v", r.SystemText(), r.Model(), r.ToolNames())
	}
	if s.FindNew("hook error") != r || s.Find("nothing like this") != nil {
		t.Error("Find/FindNew")
	}
}
