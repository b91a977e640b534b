// Package mcp is the harness's Model Context Protocol server: the task
// cycle's verbs (claim, checkpoint, validate, fail, status) as tools, over
// standard input and output, one JSON-RPC message a line.
//
// It exists for workers at the sandboxed level. Claude Code runs MCP
// servers outside its sandbox, so a worker whose Bash commands cannot
// write the main tree's state or the main repository's .git still claims,
// validates and commits through these tools, while its own commands stay
// confined. Each tool runs the real verb (`harness claim …`) as a process
// of its own, with the server's environment (the worker's id and the
// job's state root, set by the supervisor): the same code, the same rules
// and the same judge as the verb run from Bash; its project commands are
// confined by internal/fence, as a hook's are.
package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ProtocolVersion is the MCP revision the server speaks; a client asking
// for another one gets this one back, as the protocol lets it.
const ProtocolVersion = "2025-06-18"

// Tool is one tool: its name, what it says to the model, its arguments and
// how they become the verb's command line.
type Tool struct {
	Name        string
	Description string
	Schema      map[string]any
	Argv        func(args map[string]any) ([]string, error)
}

// Tools are the task cycle's verbs.
var Tools = []Tool{
	{Name: "claim", Description: "harness claim [ID] --json: take the next eligible task (or the one named) and print it as JSON",
		Schema: object(map[string]any{"id": str("the task to claim; empty: the next eligible one")}),
		Argv: func(a map[string]any) ([]string, error) {
			argv := []string{"claim"}
			if id := text(a, "id"); id != "" {
				argv = append(argv, id)
			}
			return append(argv, "--json"), nil
		}},
	{Name: "checkpoint", Description: "harness checkpoint ID STEP/TOTAL MESSAGE: record progress on the claimed task",
		Schema: object(map[string]any{"id": str("the claimed task"), "step": num("this step"), "total": num("the steps in all"), "message": str("what was done")}, "id", "step", "total", "message"),
		Argv: func(a map[string]any) ([]string, error) {
			return []string{"checkpoint", text(a, "id"), fmt.Sprintf("%d/%d", whole(a, "step"), whole(a, "total")), text(a, "message")}, nil
		}},
	{Name: "validate", Description: "harness validate ID: run the task's validation; PASS commits the work and completes it, FAIL rolls it back",
		Schema: object(map[string]any{"id": str("the claimed task")}, "id"),
		Argv:   func(a map[string]any) ([]string, error) { return []string{"validate", text(a, "id")}, nil }},
	{Name: "fail", Description: "harness fail ID --category C MESSAGE: give up the claimed task, saying why",
		Schema: object(map[string]any{"id": str("the claimed task"), "category": str("TASK_EXEC, ENV_SETUP, CONFIG, TEST_FAIL, …"), "message": str("what happened")}, "id", "category", "message"),
		Argv: func(a map[string]any) ([]string, error) {
			return []string{"fail", text(a, "id"), "--category", text(a, "category"), text(a, "message")}, nil
		}},
	{Name: "status", Description: "harness status: where the job stands",
		Schema: object(map[string]any{}),
		Argv:   func(map[string]any) ([]string, error) { return []string{"status"}, nil }},
}

func object(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
func num(desc string) map[string]any { return map[string]any{"type": "integer", "description": desc} }

func text(a map[string]any, k string) string {
	switch v := a[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

func whole(a map[string]any, k string) int {
	switch v := a[k].(type) {
	case float64:
		return int(v)
	case string:
		n, _ := strconv.Atoi(strings.TrimSpace(v))
		return n
	}
	return 0
}

// Server answers one client on in and out. Harness is the harness
// executable the tools run; Timeout bounds each tool's run (a validation
// runs within it).
type Server struct {
	Harness string
	Timeout time.Duration
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Serve reads requests until in ends, answering each in turn.
func (s Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			enc.Encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{-32700, "parse error: " + err.Error()}})
			continue
		}
		if len(req.ID) == 0 {
			continue // a notification (initialized, cancelled): nothing to answer
		}
		result, rerr := s.handle(ctx, req)
		if err := enc.Encode(response{JSONRPC: "2.0", ID: req.ID, Result: result, Error: rerr}); err != nil {
			return err
		}
	}
	return sc.Err()
}

func (s Server) handle(ctx context.Context, req request) (any, *rpcError) {
	switch req.Method {
	case "initialize":
		return map[string]any{
			"protocolVersion": ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "harness", "version": "1"},
			"instructions":    "The harness's task cycle for a worker whose commands run sandboxed: claim, checkpoint, validate, fail, status.",
		}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		var list []map[string]any
		for _, t := range Tools {
			list = append(list, map[string]any{"name": t.Name, "description": t.Description, "inputSchema": t.Schema})
		}
		return map[string]any{"tools": list}, nil
	case "tools/call":
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, &rpcError{-32602, "invalid params: " + err.Error()}
		}
		for _, t := range Tools {
			if t.Name == p.Name {
				return s.call(ctx, t, p.Arguments), nil
			}
		}
		return nil, &rpcError{-32602, "unknown tool: " + p.Name}
	}
	return nil, &rpcError{-32601, "method not found: " + req.Method}
}

// call runs the tool's verb and answers with what it printed; a verb that
// exits non-zero is an error result, its output the reason.
func (s Server) call(ctx context.Context, t Tool, args map[string]any) map[string]any {
	argv, err := t.Argv(args)
	if err != nil {
		return result(err.Error(), true)
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Harness, argv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	msg := strings.TrimRight(out.String(), "\n")
	if err != nil {
		if msg == "" {
			msg = err.Error()
		}
		return result(msg, true)
	}
	return result(msg, false)
}

func result(text string, isError bool) map[string]any {
	return map[string]any{"content": []map[string]any{{"type": "text", "text": text}}, "isError": isError}
}
