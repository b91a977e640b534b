package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
	"github.com/harness-agent/harness/internal/testbin"
)

// sandboxedJob is the plan of TestScenarioWorkersSandboxed.
var sandboxedJob = []struct{ title, file, check string }{
	{"Alpha", "alpha.txt", "test -f alpha.txt"},
	{"Beta", "beta.txt", "test -f beta.txt"},
	{"Gamma", "gamma.txt", "test -f gamma.txt"},
	{"Delta", "delta.txt", "test -f delta.txt"},
}

// sandboxedBrain is workerBrain for a worker whose commands run in Claude
// Code's sandbox: the task cycle goes through the harness's MCP tools, the
// work through Bash (confined), which also tries to write into the main
// tree, outside its sandbox.
func sandboxedBrain(main string) func(r *fakeapi.Request) (fakeapi.Turn, bool) {
	return func(r *fakeapi.Request) (fakeapi.Turn, bool) {
		name, input, result := lastTool(r)
		switch {
		case name == "", name == "mcp__harness__validate":
			return fakeapi.ToolUse("mcp__harness__claim", map[string]any{}), false
		case name == "mcp__harness__claim":
			var out struct {
				Claimed *struct {
					ID string `json:"id"`
					By string `json:"claimed_by"`
				} `json:"claimed"`
			}
			if json.Unmarshal([]byte(firstJSONLine(result)), &out) != nil || out.Claimed == nil {
				return fakeapi.Text("Nothing left for me to claim."), false
			}
			var n int
			fmt.Sscanf(out.Claimed.ID, "task-%d", &n)
			if n < 1 || n > len(sandboxedJob) {
				return fakeapi.Text("Unknown task."), false
			}
			j := sandboxedJob[n-1]
			// Beside the work, writes into the main tree and into the
			// other workers' trees: outside this worker's sandbox.
			others := ""
			for _, w := range []string{"w1", "w2", "w3"} {
				if w != out.Claimed.By {
					others += fmt.Sprintf(" ../%s/escaped-%s", w, j.file)
				}
			}
			return fakeapi.Bash(fmt.Sprintf("echo %s > %s; touch %s/escaped-%s%s 2>/dev/null; true # work %s",
				j.file, j.file, main, j.file, others, out.Claimed.ID)), false
		case name == "Bash" && strings.Contains(string(input), " # work task-"):
			var in struct {
				Command string `json:"command"`
			}
			json.Unmarshal(input, &in)
			id := in.Command[strings.LastIndex(in.Command, " # work ")+len(" # work "):]
			return fakeapi.ToolUse("mcp__harness__validate", map[string]any{"id": id}), false
		}
		return fakeapi.Text("Done."), false
	}
}

// lastTool is the name and input of the last tool call of the
// conversation and the text of its result; "" when the last thing the
// session got was not a tool's result.
func lastTool(r *fakeapi.Request) (name string, input json.RawMessage, result string) {
	msgs := r.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "assistant" {
			continue
		}
		for _, b := range msgs[i].Content {
			if b.Type == "tool_use" {
				name, input = b.Name, b.Input
			}
		}
		break
	}
	res := r.LastToolResults()
	if len(res) == 0 {
		return "", nil, ""
	}
	return name, input, res[len(res)-1].Text
}

// TestScenarioWorkersSandboxed: `harness workers 3` at the sandboxed level
// (`harness install --sandbox`; project, home, lock directory and the
// workers' trees outside /tmp). Each worker's session runs in Claude Code's
// sandbox; its claim and validate go through the harness's MCP server,
// which Claude Code runs outside it (the supervisor gives each session
// `--mcp-config`), and its validations run confined by the harness. A
// worker's own writes into the main tree and into the other workers'
// trees fail. Every task is integrated exactly once.
func TestScenarioWorkersSandboxed(t *testing.T) {
	t.Parallel()
	p := newSandboxedProject(t)
	p.initState()
	for _, j := range sandboxedJob {
		p.add(j.title, "--validate", j.check)
	}
	api := fakeapi.New(t, fakeapi.Loop(sandboxedBrain(p.Dir)))
	claude := RequireClaude(t)
	cmd := exec.Command(filepath.Join(p.Bin, "harness"), "workers", "3", "--", "--dangerously-skip-permissions")
	cmd.Dir = p.Dir
	trees := outsideTmp(t)()
	cmd.Env = append(runEnv(p, api), "HARNESS_CLAUDE="+claude, noRetries, "HARNESS_WORKTREES="+trees)
	var out strings.Builder
	var mu sync.Mutex
	cmd.Stdout = lockedWriter{&mu, &out}
	cmd.Stderr = cmd.Stdout
	cmd = testbin.AsPerson(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			mu.Lock()
			t.Fatalf("harness workers: %v\n%s\nrequests:\n%s", err, out.String(), api.Summary())
		}
	case <-time.After(6 * time.Minute):
		cmd.Process.Signal(os.Interrupt)
		<-done
		mu.Lock()
		t.Fatalf("harness workers did not finish in 6 minutes:\n%s\nrequests:\n%s", out.String(), api.Summary())
	}
	mu.Lock()
	output := out.String()
	mu.Unlock()
	if !strings.Contains(output, fmt.Sprintf("job done: all %d tasks integrated", len(sandboxedJob))) {
		t.Fatalf("the job did not end done:\n%s", output)
	}
	log := p.progressLog()
	for i := range sandboxedJob {
		id := fmt.Sprintf("task-%03d", i+1)
		if tk := p.task(id); tk.Status != "completed" {
			t.Errorf("%s is %s, want completed", id, tk.Status)
		}
		if n := strings.Count(log, "] MERGE ["+id+"] integrated into main as "); n != 1 {
			t.Errorf("%s integrated %d times, want once", id, n)
		}
	}
	if err := checkExclusiveClaims(log); err != nil {
		t.Error(err)
	}
	for _, j := range sandboxedJob {
		if p.exists("escaped-" + j.file) {
			t.Errorf("a worker's sandboxed command wrote into the main tree (escaped-%s)", j.file)
		}
	}
	if found, _ := filepath.Glob(filepath.Join(trees, "*", "w*", "escaped-*")); len(found) > 0 {
		t.Errorf("a worker's sandboxed command wrote into another worker's tree: %v", found)
	}
	if strings.Contains(log, "TAMPER") {
		t.Errorf("TAMPER in the log:\n%s", log)
	}
}
