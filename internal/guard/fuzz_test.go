package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/hook"
)

// activeRoot makes an active state root with n tasks.
func activeRoot(tb testing.TB, n int) string {
	tb.Helper()
	dir, err := filepath.EvalSymlinks(tb.TempDir())
	require.NoError(tb, err)
	var b strings.Builder
	b.WriteString(`{"version":2,"session_config":{"concurrency_mode":"exclusive"},"tasks":[`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		dep := ""
		if i > 1 {
			dep = fmt.Sprintf(`"task-%05d"`, i-1)
		}
		fmt.Fprintf(&b, `{"id":"task-%05d","title":"Task %d","status":"pending","priority":"P1","depends_on":[%s],"attempts":0,"max_attempts":3,"validation":{"command":"true","timeout_seconds":60},"error_log":[],"checkpoints":[]}`, i, i, dep)
	}
	b.WriteString(`],"session_count":1}`)
	require.NoError(tb, os.WriteFile(filepath.Join(dir, "harness-tasks.json"), []byte(b.String()), 0o644))
	require.NoError(tb, os.WriteFile(filepath.Join(dir, ".harness-active"), nil, 0o644))
	return dir
}

func payload(dir, tool string, input any) []byte {
	data, _ := json.Marshal(map[string]any{"session_id": "bench", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input})
	return data
}

// checkOutput asserts the rendered decision is nothing or one well-formed
// PreToolUse object.
func checkOutput(t *testing.T, d hook.Decision) {
	var out, errb bytes.Buffer
	code := hook.Render(hook.PreToolUse, d, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if out.Len() == 0 {
		return
	}
	var v map[string]any
	dec := json.NewDecoder(&out)
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %q: %v", out.String(), err)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value: %q", out.String())
	}
	if hs, ok := v["hookSpecificOutput"].(map[string]any); ok && hs["hookEventName"] != hook.PreToolUse {
		t.Fatalf("wrong hookEventName: %q", out.String())
	}
}

// FuzzCheck throws arbitrary tools and inputs at an active root.
func FuzzCheck(f *testing.F) {
	for _, seed := range []struct{ tool, input string }{
		{"Bash", `{"command":"echo x > harness-tasks.json"}`},
		{"Bash", `{"command":"bash -c 'eval \"rm .harness-active\"'"}`},
		{"Bash", `{"command":"$(("}`},
		{"Write", `{"file_path":"harness-tasks.json","content":"{\"tasks\":[]}"}`},
		{"Edit", `{"file_path":"harness-tasks.json","old_string":"pending","new_string":"completed","replace_all":true}`},
		{"MultiEdit", `{"file_path":"harness-tasks.json","edits":[{"old_string":"Task 1","new_string":"x"}]}`},
		{"Write", `{"file_path":"harness-progress.txt","content":""}`},
		{"NotebookEdit", `{"notebook_path":"../x"}`},
		{"Read", `null`},
		{"Bash", `[1,2]`},
	} {
		f.Add(seed.tool, seed.input)
	}
	dir := activeRoot(f, 3)
	f.Fuzz(func(t *testing.T, tool, input string) {
		var in any
		if json.Unmarshal([]byte(input), &in) != nil {
			in = input
		}
		d := Check(hook.Parse(payload(dir, tool, in)))
		checkOutput(t, d)
	})
}

// FuzzPayload throws arbitrary bytes at the guard as its stdin.
func FuzzPayload(f *testing.F) {
	for _, s := range []string{"", "{}", "[]", `{"cwd":42}`, "\x00\xff", `{"tool_name":"Bash","tool_input":{"command":7}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkOutput(t, Check(hook.Parse(data)))
	})
}

// BenchmarkUnrelated measures the hot path: calls that have nothing to do
// with the harness cost the same whatever the size of the state.
func BenchmarkUnrelated(b *testing.B) {
	for _, n := range []int{0, 10000} {
		dir := activeRoot(b, n)
		for _, c := range []struct {
			name, tool string
			input      any
		}{
			{"Read", "Read", map[string]any{"file_path": "main.go"}},
			{"Bash", "Bash", map[string]any{"command": "go test ./... && git status"}},
			{"Write", "Write", map[string]any{"file_path": "main.go", "content": "package main\n"}},
			{"BashWrite", "Bash", map[string]any{"command": "go test ./... > test.log 2>&1"}},
		} {
			p := hook.Parse(payload(dir, c.tool, c.input))
			Check(p) // warm the summary cache, as the previous call would have
			b.Run(fmt.Sprintf("%s/tasks=%d", c.name, n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					Check(p)
				}
			})
		}
	}
}
