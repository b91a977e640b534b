package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// These smoke tests prove the e2e rig itself: that the real CLI runs against
// the fake API, that scripted tool calls really execute, and that the hook
// contracts of CLAUDE_CODE_FACTS.md hold for the pinned CLI. The hooks here
// are throwaway shell fixtures; the harness's own hooks are tested by the
// scenario tests built on this rig.

// TestSmokePlainText: a text-only turn ends the session and becomes the
// JSON result.
func TestSmokePlainText(t *testing.T) {
	t.Parallel()
	api := fakeapi.New(t, fakeapi.Text("hello from the fake model"))
	res := Run(t, Options{Prompt: "say hi", API: api})
	if res.ExitCode != 0 || res.IsError || res.Subtype != "success" {
		t.Fatalf("want a successful run, got %v", res)
	}
	if res.Result != "hello from the fake model" {
		t.Errorf("result = %q", res.Result)
	}
	reqs := api.MainRequests()
	if len(reqs) != 1 {
		t.Fatalf("want 1 main-loop request, got %d\n%s", len(reqs), api.Summary())
	}
	r := reqs[0]
	if r.Path != "/v1/messages" || r.Query != "beta=true" || !r.Stream() {
		t.Errorf("unexpected request shape: %s?%s stream=%v", r.Path, r.Query, r.Stream())
	}
	if got := r.Header.Get("X-Api-Key"); got != "test" {
		t.Errorf("x-api-key = %q", got)
	}
	if !r.LastUserContains("say hi") {
		t.Errorf("prompt not in first request: %q", r.NewText())
	}
	if api.Remaining() != 0 {
		t.Errorf("%d script turns unused", api.Remaining())
	}
}

// TestSmokeBashRuns: a scripted Bash tool_use really runs in the project
// directory and its output comes back as the tool_result.
func TestSmokeBashRuns(t *testing.T) {
	t.Parallel()
	api := fakeapi.New(t,
		fakeapi.Bash("echo made > created.txt && echo bash-ran-ok"),
		fakeapi.Text("file created"),
	)
	project := t.TempDir()
	res := Run(t, Options{Prompt: "create a file", API: api, ProjectDir: project})
	if res.ExitCode != 0 || res.Result != "file created" {
		t.Fatalf("unexpected result: %v", res)
	}
	data, err := os.ReadFile(filepath.Join(project, "created.txt"))
	if err != nil || strings.TrimSpace(string(data)) != "made" {
		t.Fatalf("Bash did not create the file in the project dir: %v %q", err, data)
	}
	trs := api.Request(1).LastToolResults()
	if len(trs) != 1 || trs[0].IsError || !strings.Contains(trs[0].Text, "bash-ran-ok") {
		t.Errorf("tool result = %+v", trs)
	}
}

// TestSmokePreToolUseDeny: a PreToolUse hook's deny JSON stops the tool and
// the model sees "PreToolUse:Bash hook error: <reason>" as an error result.
func TestSmokePreToolUseDeny(t *testing.T) {
	t.Parallel()
	fixtures := t.TempDir()
	stdinLog := filepath.Join(fixtures, "pre-tool-use.stdin")
	hook := WriteScript(t, fixtures, "deny.sh", `cat > '`+stdinLog+`'
printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"smoke-deny: not today"}}'
`)
	api := fakeapi.New(t,
		fakeapi.Bash("touch should-not-exist.txt"),
		fakeapi.Text("ok, I was denied"),
	)
	project := t.TempDir()
	res := Run(t, Options{
		Prompt:     "touch a file",
		API:        api,
		ProjectDir: project,
		Settings:   HookSettings(Hook{Event: "PreToolUse", Matcher: "*", Command: hook}),
	})
	if res.ExitCode != 0 || res.Result != "ok, I was denied" {
		t.Fatalf("unexpected result: %v", res)
	}
	if _, err := os.Stat(filepath.Join(project, "should-not-exist.txt")); err == nil {
		t.Fatal("denied Bash command ran anyway")
	}
	trs := api.Request(1).LastToolResults()
	if len(trs) != 1 || !trs[0].IsError {
		t.Fatalf("want one error tool_result, got %+v", trs)
	}
	if want := "PreToolUse:Bash hook error"; !strings.Contains(trs[0].Text, want) || !strings.Contains(trs[0].Text, "smoke-deny: not today") {
		t.Errorf("tool result %q lacks %q and the reason", trs[0].Text, want)
	}
	var in map[string]any
	data, _ := os.ReadFile(stdinLog)
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("hook stdin is not JSON: %v: %q", err, data)
	}
	if in["hook_event_name"] != "PreToolUse" || in["tool_name"] != "Bash" {
		t.Errorf("hook input = %s", data)
	}
	if ti, _ := in["tool_input"].(map[string]any); ti["command"] != "touch should-not-exist.txt" {
		t.Errorf("tool_input = %v", in["tool_input"])
	}
}

// TestSmokeStopBlocksOnce: a Stop hook's block makes the CLI send
// "Stop hook feedback:" plus the reason back to the model, which gets one
// more turn; the hook sees stop_hook_active on that second stop.
func TestSmokeStopBlocksOnce(t *testing.T) {
	t.Parallel()
	fixtures := t.TempDir()
	hook := WriteScript(t, fixtures, "stop.sh", `in=$(cat)
echo "$in" >> '`+filepath.Join(fixtures, "stop.stdin")+`'
case "$in" in
*'"stop_hook_active":true'*) exit 0 ;;
esac
printf '%s\n' '{"decision":"block","reason":"smoke-stop: tests are not run yet"}'
`)
	api := fakeapi.New(t,
		fakeapi.Text("I think I am done"),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			if !r.LastUserContains("Stop hook feedback:") {
				return fakeapi.Text("continued without feedback")
			}
			return fakeapi.Text("now really done")
		}),
	)
	res := Run(t, Options{
		Prompt:   "finish",
		API:      api,
		Settings: HookSettings(Hook{Event: "Stop", Command: hook}),
	})
	if res.ExitCode != 0 || res.Result != "now really done" {
		t.Fatalf("unexpected result: %v", res)
	}
	reqs := api.MainRequests()
	if len(reqs) != 2 {
		t.Fatalf("want 2 main-loop requests, got %d\n%s", len(reqs), api.Summary())
	}
	if !reqs[1].LastUserContains("Stop hook feedback:") || !reqs[1].LastUserContains("smoke-stop: tests are not run yet") {
		t.Errorf("second request lacks the Stop feedback: %q", reqs[1].NewText())
	}
	if n := api.CountNew("Stop hook feedback:"); n != 1 {
		t.Errorf("Stop feedback sent %d times, want 1", n)
	}
	data, _ := os.ReadFile(filepath.Join(fixtures, "stop.stdin"))
	if lines := strings.Count(strings.TrimSpace(string(data)), "\n") + 1; lines != 2 {
		t.Errorf("Stop hook ran %d times, want 2:\n%s", lines, data)
	}
}

// TestSmokeSessionStartContext: SessionStart additionalContext (JSON) and
// plain stdout both reach the model in the first request.
func TestSmokeSessionStartContext(t *testing.T) {
	t.Parallel()
	fixtures := t.TempDir()
	jsonHook := WriteScript(t, fixtures, "start-json.sh", `cat > /dev/null
printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"SMOKE-CONTEXT-JSON: resume task 7"}}'
`)
	plainHook := WriteScript(t, fixtures, "start-plain.sh", `cat > /dev/null
echo "SMOKE-CONTEXT-PLAIN: read PROGRESS.md"
`)
	api := fakeapi.New(t, fakeapi.Text("context seen"))
	res := Run(t, Options{
		Prompt: "start",
		API:    api,
		Settings: HookSettings(
			Hook{Event: "SessionStart", Command: jsonHook},
			Hook{Event: "SessionStart", Command: plainHook},
		),
	})
	if res.ExitCode != 0 {
		t.Fatalf("unexpected result: %v", res)
	}
	first := api.Request(0)
	for _, want := range []string{"SMOKE-CONTEXT-JSON: resume task 7", "SMOKE-CONTEXT-PLAIN: read PROGRESS.md"} {
		if !first.Contains(want) {
			t.Errorf("first request lacks %q", want)
		}
	}
}

// TestSmokeSkillListed: a skill installed in ~/.claude/skills is offered to
// the model by name and description in the first request.
func TestSmokeSkillListed(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	WriteSkill(t, home, "smokeskill", "SMOKE-SKILL-DESC: use when smoke testing", "Smoke skill body.")
	api := fakeapi.New(t, fakeapi.Text("listed"))
	res := Run(t, Options{Prompt: "which skills?", API: api, Home: home})
	if res.ExitCode != 0 {
		t.Fatalf("unexpected result: %v", res)
	}
	if want := "- smokeskill: SMOKE-SKILL-DESC: use when smoke testing"; !api.Request(0).Contains(want) {
		t.Errorf("first request does not list %q", want)
	}
}

// TestSmokeCompactionIsSide: a /compact on a resumed session sends a
// summary request that carries the tool list like the agent loop; the fake
// must recognise it and leave the script alone, or every later turn of a
// scenario would shift.
func TestSmokeCompactionIsSide(t *testing.T) {
	t.Parallel()
	api := fakeapi.New(t, fakeapi.Text("first session"), fakeapi.Text("after compaction"))
	home, project := t.TempDir(), t.TempDir()
	first := Run(t, Options{Prompt: "remember this", API: api, Home: home, ProjectDir: project})
	if first.ExitCode != 0 || first.SessionID == "" {
		t.Fatalf("first run: %v", first)
	}
	compact := Run(t, Options{Prompt: "/compact", API: api, Home: home, ProjectDir: project, Args: []string{"--resume", first.SessionID}})
	if compact.ExitCode != 0 {
		t.Fatalf("compact run: %v", compact)
	}
	var compactions int
	for _, r := range api.AllRequests() {
		if r.IsCompaction() {
			compactions++
		}
	}
	if compactions != 1 || api.Remaining() != 1 {
		t.Fatalf("want 1 compaction request and the script untouched, got %d and %d turn(s) left\n%s", compactions, api.Remaining(), api.Summary())
	}
	third := Run(t, Options{Prompt: "go on", API: api, Home: home, ProjectDir: project, Args: []string{"--continue"}})
	if third.Result != "after compaction" {
		t.Errorf("third run: %v", third)
	}
	if !api.Last().Contains("fakeapi compaction summary") {
		t.Errorf("compacted conversation lacks the summary")
	}
}
