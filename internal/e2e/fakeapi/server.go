// Package fakeapi is a scripted, loopback-only stand-in for the Anthropic
// Messages API, good enough to drive the real Claude Code CLI offline.
//
// The harness must be tested against the real CLI (its hook contract changes
// between versions and only the real thing tells us how), but a real model is
// neither reachable nor deterministic. So the model is replaced: each request
// of the agent loop is answered by the next Turn of a scenario script, streamed
// back as server-sent events exactly as the real API does, and every request
// is recorded so a test can assert what Claude Code fed back to the model
// (tool results, hook denials, Stop hook feedback, SessionStart context,
// skill listings).
//
// Point the CLI at it with ANTHROPIC_BASE_URL=server.URL() (see package e2e,
// which does this for you).
package fakeapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// FinalText is the reply once the script is used up: a plain text turn that
// ends the session, so a scenario need not script the model's last words.
const FinalText = "Done."

// SideText is the reply to side requests (title/summary generation and any
// other request that is not part of the agent loop). It consumes no script
// turn, so side traffic cannot shift a scenario's script.
const SideText = "OK"

// CompactSummary answers compaction requests (/compact, auto-compact) in
// the <analysis>/<summary> form Claude Code asks for; the CLI then starts
// the compacted conversation with this summary.
const CompactSummary = "<analysis>Scripted conversation.</analysis>\n<summary>fakeapi compaction summary: the scripted session so far.</summary>"

// Server is a running fake Messages API. Create it with New; it is closed
// when the test ends.
type Server struct {
	t  testing.TB
	ts *httptest.Server

	// IsMain decides which requests belong to the agent loop and consume
	// the script. It defaults to IsMainLoop; set it before the CLI starts.
	IsMain func(*Request) bool

	mu        sync.Mutex
	script    []Turn
	subScript []Turn
	subSet    bool
	all       []*Request
	nextID    int
	dumpDir   string
}

// New starts a fake API on 127.0.0.1 answering main-loop requests with
// script, in order. The server is closed by t.Cleanup; if the test failed,
// a summary of every request is logged first, which is usually enough to
// see what the CLI sent. Set FAKEAPI_DUMP_DIR to also write every request
// (headers and body) to files there, for studying a new CLI version.
func New(t testing.TB, script ...Turn) *Server {
	t.Helper()
	s := &Server{t: t, script: append([]Turn(nil), script...), IsMain: IsMainLoop}
	if d := os.Getenv("FAKEAPI_DUMP_DIR"); d != "" {
		s.dumpDir = filepath.Join(d, sanitize(t.Name()))
		if err := os.MkdirAll(s.dumpDir, 0o755); err != nil {
			t.Fatalf("fakeapi: FAKEAPI_DUMP_DIR: %v", err)
		}
	}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.ts.Close()
		if t.Failed() {
			t.Log(s.Summary())
		}
	})
	return s
}

// URL is the base URL to give the CLI as ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return s.ts.URL }

// Append adds turns to the end of the script; safe while the CLI runs.
func (s *Server) Append(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, turns...)
}

// SubagentScript gives subagents a script of their own: once called,
// requests carrying X-Claude-Code-Agent-Id are answered from these turns
// (then FinalText) instead of the main script. Without it, subagent
// requests consume the main script in arrival order, which is only
// deterministic for foreground agents (see Agent). Call it before the CLI
// starts; calling it again appends.
func (s *Server) SubagentScript(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subSet = true
	s.subScript = append(s.subScript, turns...)
}

// Remaining is the number of script turns (main and subagent scripts
// together) not yet used. A scenario that expects the model to have acted on
// every turn asserts it is 0.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) + len(s.subScript)
}

// Requests returns the raw JSON bodies of the main-loop requests, oldest
// first.
func (s *Server) Requests() []json.RawMessage {
	var out []json.RawMessage
	for _, r := range s.MainRequests() {
		out = append(out, r.Body)
	}
	return out
}

// MainRequests returns the main-loop requests (those answered from the
// script), oldest first.
func (s *Server) MainRequests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Request
	for _, r := range s.all {
		if r.Main {
			out = append(out, r)
		}
	}
	return out
}

// AllRequests returns every request received, side requests included.
func (s *Server) AllRequests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.all...)
}

// Request returns the i-th main-loop request, failing the test if there is
// none.
func (s *Server) Request(i int) *Request {
	s.t.Helper()
	rs := s.MainRequests()
	if i < 0 || i >= len(rs) {
		s.t.Fatalf("fakeapi: main-loop request %d requested, only %d received", i, len(rs))
	}
	return rs[i]
}

// Last returns the last main-loop request, failing the test if there is none.
func (s *Server) Last() *Request {
	s.t.Helper()
	rs := s.MainRequests()
	if len(rs) == 0 {
		s.t.Fatalf("fakeapi: no main-loop request received")
	}
	return rs[len(rs)-1]
}

// Find returns the first main-loop request whose Text contains text, or nil.
func (s *Server) Find(text string) *Request {
	for _, r := range s.MainRequests() {
		if r.Contains(text) {
			return r
		}
	}
	return nil
}

// FindNew returns the first main-loop request that added text to the
// conversation (see Request.NewText), or nil. Unlike Find, it pinpoints the
// request right after the event that produced the text.
func (s *Server) FindNew(text string) *Request {
	for _, r := range s.MainRequests() {
		if r.LastUserContains(text) {
			return r
		}
	}
	return nil
}

// Contains reports whether any main-loop request contains text.
func (s *Server) Contains(text string) bool { return s.Find(text) != nil }

// CountNew counts the main-loop requests that added text to the
// conversation, e.g. how many times a Stop hook blocked.
func (s *Server) CountNew(text string) int {
	n := 0
	for _, r := range s.MainRequests() {
		if r.LastUserContains(text) {
			n++
		}
	}
	return n
}

// Summary describes every request received, one line each, for test logs.
func (s *Server) Summary() string {
	var b strings.Builder
	reqs := s.AllRequests()
	fmt.Fprintf(&b, "fakeapi: %d request(s), %d script turn(s) left\n", len(reqs), s.Remaining())
	for _, r := range reqs {
		kind := "side"
		switch {
		case r.Main && r.IsSubagent():
			kind = "main, subagent " + r.AgentID()
		case r.Main:
			kind = "main"
		case r.IsCompaction():
			kind = "side, compaction"
		}
		fmt.Fprintf(&b, "  #%d %s %s?%s [%s] model=%s tools=%d", r.Index, r.Method, r.Path, r.Query, kind, r.Model(), len(r.parsed.Tools))
		if r.Main {
			fmt.Fprintf(&b, " new=%q -> %s", truncate(r.NewText(), 300), r.Reply)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// IsMainLoop is the default main-loop detector. Claude Code's agent loop
// (main agent and subagents alike) always posts a streaming request to
// /v1/messages offering tools. Side requests either go elsewhere (HEAD
// /api/hello connectivity checks, count_tokens), are sent without tools
// (title or summary generation), or are compaction requests: those carry
// the full tool list like the agent loop but end with Claude Code's
// "respond with TEXT ONLY ... create a detailed summary" instruction.
func IsMainLoop(r *Request) bool {
	return r.Method == http.MethodPost &&
		strings.TrimSuffix(r.Path, "/") == "/v1/messages" &&
		len(r.parsed.Tools) > 0 &&
		!r.IsCompaction()
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r := &Request{
		Method: hr.Method,
		Path:   hr.URL.Path,
		Query:  hr.URL.RawQuery,
		Header: hr.Header.Clone(),
		Body:   json.RawMessage(body),
	}
	if len(body) > 0 {
		// A body we cannot parse is still recorded; it just is no
		// main-loop request.
		_ = json.Unmarshal(body, &r.parsed)
	}

	s.mu.Lock()
	r.Index = len(s.all)
	s.all = append(s.all, r)
	isMain := s.IsMain != nil && s.IsMain(r)
	var reply Turn
	if isMain {
		r.Main = true
		if s.subSet && r.IsSubagent() {
			reply = next(&s.subScript, r)
		} else {
			reply = next(&s.script, r)
		}
		r.Reply = reply
	}
	msgID := s.newID("msg")
	reply = s.assignIDs(reply)
	s.mu.Unlock()
	s.dump(r)

	switch {
	case isMain && reply.Error != nil:
		for k, v := range reply.Error.Header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Error.Status)
		json.NewEncoder(w).Encode(map[string]any{"type": "error",
			"error": map[string]any{"type": reply.Error.Type, "message": reply.Error.Message}})
	case isMain:
		s.writeMessage(w, r, msgID, reply)
	case strings.HasSuffix(r.Path, "/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": approxTokens(body)})
	case r.IsCompaction():
		s.writeMessage(w, r, msgID, Text(CompactSummary))
	case hr.Method == http.MethodPost && strings.HasPrefix(r.Path, "/v1/messages"):
		s.writeMessage(w, r, msgID, Text(SideText))
	default:
		// Anything else (model lists, feature flags, ...) gets an empty
		// object: harmless for optional calls, and visible in Summary.
		writeJSON(w, map[string]any{})
	}
}

// next pops (or, for a Loop, peeks) the head of script. Called with s.mu
// held.
func next(script *[]Turn, r *Request) Turn {
	if len(*script) == 0 {
		return Text(FinalText)
	}
	head := (*script)[0]
	// The turn function may call Request helpers but must not call back
	// into the Server: it runs under the lock to keep turns ordered.
	reply, done := head.resolve(r)
	if done {
		*script = (*script)[1:]
	}
	return reply
}

func (s *Server) newID(prefix string) string {
	s.nextID++
	return fmt.Sprintf("%s_fake%04d", prefix, s.nextID)
}

func (s *Server) assignIDs(t Turn) Turn {
	blocks := append([]Block(nil), t.Blocks...)
	for i := range blocks {
		if blocks[i].Type == "tool_use" && blocks[i].ID == "" {
			blocks[i].ID = s.newID("toolu")
		}
	}
	t.Blocks = blocks
	return t
}

func (s *Server) dump(r *Request) {
	if s.dumpDir == "" {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s?%s main=%v\n", r.Method, r.Path, r.Query, r.Main)
	for k, v := range r.Header {
		if strings.EqualFold(k, "x-api-key") || strings.EqualFold(k, "authorization") {
			v = []string{"<redacted>"}
		}
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(v, ", "))
	}
	b.WriteString("\n")
	name := filepath.Join(s.dumpDir, fmt.Sprintf("%03d.txt", r.Index))
	_ = os.WriteFile(name, []byte(b.String()), 0o644)
	_ = os.WriteFile(strings.TrimSuffix(name, ".txt")+".json", r.Body, 0o644)
}

func sanitize(name string) string {
	return strings.Map(func(c rune) rune {
		if c == '/' || c == '\\' || c == ' ' || c == ':' {
			return '_'
		}
		return c
	}, name)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// approxTokens is a rough token count (4 bytes a token) so the CLI's context
// accounting sees plausible, growing numbers.
func approxTokens(body []byte) int { return len(body)/4 + 1 }
