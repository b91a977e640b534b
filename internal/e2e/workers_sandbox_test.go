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

// sandboxedJob is the plan of TestScenarioWorkersSandboxed. Delta's
// check and cleanup run plant.sh, a project script that plants a file in
// the record directory wherever it can (the worker's validate through the
// MCP server, the cleanup after its first attempt fails, the merge queue's
// check on the merged tree: all run by the harness outside Claude Code's
// sandbox, all confined by it).
var sandboxedJob = []struct{ title, file, check, cleanup string }{
	{"Alpha", "alpha.txt", "test -f alpha.txt", ""},
	{"Beta", "beta.txt", "test -f beta.txt", ""},
	{"Gamma", "gamma.txt", "test -f gamma.txt", ""},
	{"Delta", "delta.txt", "sh plant.sh check && test -f delta.txt", "sh plant.sh cleanup"},
}

// plantScript plants a file in the record directory (its name saying who
// ran it) and exits 0 whatever happened.
const plantScript = `for d in "$HOME"/.local/state/harness/records/*/; do touch "$d/planted-$1" 2>/dev/null; done; true
`

// sandboxedBrain is workerBrain for a worker whose commands run in Claude
// Code's sandbox: the task cycle goes through the harness's MCP tools, the
// work through Bash (confined), which also tries to write into the main
// tree, outside its sandbox.
func sandboxedBrain(main, machine string) func(r *fakeapi.Request) (fakeapi.Turn, bool) {
	return func(r *fakeapi.Request) (fakeapi.Turn, bool) {
		name, input, result := lastTool(r)
		switch {
		case name == "", name == "mcp__harness__validate":
			return fakeapi.ToolUse("mcp__harness__claim", map[string]any{}), false
		case name == "mcp__harness__claim":
			claimed, ok := claimedTask(result)
			if !ok {
				return fakeapi.Text("Nothing left for me to claim."), false
			}
			var n int
			fmt.Sscanf(claimed.ID, "task-%d", &n)
			if n < 1 || n > len(sandboxedJob) {
				return fakeapi.Text("Unknown task."), false
			}
			j := sandboxedJob[n-1]
			// Beside the work, writes into the main tree and into the
			// other workers' trees: outside this worker's sandbox.
			others := ""
			for _, w := range []string{machine + "w1", machine + "w2", machine + "w3"} {
				if w != claimed.By {
					others += fmt.Sprintf(" ../%s/escaped-%s", w, j.file)
				}
			}
			work := fmt.Sprintf("echo %s > %s", j.file, j.file)
			if j.cleanup != "" && claimed.Attempt == 1 {
				work = "true" // a first attempt that fails: its cleanup runs
			}
			return fakeapi.Bash(fmt.Sprintf("%s; touch %s/escaped-%s%s 2>/dev/null; true # work %s",
				work, main, j.file, others, claimed.ID)), false
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
	runSandboxedWorkers(t, false)
}

// TestScenarioWorkersSandboxedRemote is TestScenarioWorkersSandboxed on a
// job shared through a git remote (a bare repository outside /tmp):
// `harness workers 3 --remote origin --machine m1`. The MCP server's
// verbs run outside the sandbox and publish each change on the remote's
// refs like any verb; the sessions' own commands reach neither the record
// nor the remote's refs. Every task is integrated exactly once, and the
// remote's trail (`harness history`) replays without a violation.
func TestScenarioWorkersSandboxedRemote(t *testing.T) {
	t.Parallel()
	runSandboxedWorkers(t, true)
}

func runSandboxedWorkers(t *testing.T, shared bool) {
	p := newSandboxedProject(t)
	p.initState()
	p.writeFile("plant.sh", plantScript)
	p.git("add", "plant.sh")
	p.git("commit", "-q", "-m", "plant")
	for _, j := range sandboxedJob {
		args := []string{"--validate", j.check}
		if j.cleanup != "" {
			args = append(args, "--cleanup", j.cleanup)
		}
		p.add(j.title, args...)
	}
	args := []string{"workers", "3"}
	machine := ""
	if shared {
		bare := filepath.Join(outsideTmp(t)(), "remote.git")
		if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).CombinedOutput(); err != nil {
			t.Fatalf("git init --bare: %v %s", err, out)
		}
		p.git("remote", "add", "origin", bare)
		p.git("push", "-q", "origin", "main")
		args = append(args, "--remote", "origin", "--machine", "m1")
		machine = "m1-"
	}
	api := fakeapi.New(t, fakeapi.Loop(sandboxedBrain(p.Dir, machine)))
	claude := RequireClaude(t)
	cmd := exec.Command(filepath.Join(p.Bin, "harness"), append(args, "--", "--dangerously-skip-permissions")...)
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
	if found, _ := filepath.Glob(filepath.Join(trees, "*", machine+"w*", "escaped-*")); len(found) > 0 {
		t.Errorf("a worker's sandboxed command wrote into another worker's tree: %v", found)
	}
	// plant.sh ran as a check and as a cleanup, and never reached the record.
	if !strings.Contains(log, "ERROR [task-004]") {
		t.Errorf("task-004's first attempt did not fail (its cleanup never ran):\n%s", log)
	}
	if found, _ := filepath.Glob(filepath.Join(p.recordDir(), "planted-*")); len(found) > 0 {
		t.Errorf("a project command the harness ran wrote the record: %v", found)
	}
	if strings.Contains(log, "TAMPER") {
		t.Errorf("TAMPER in the log:\n%s", log)
	}
	if shared {
		history := exec.Command(filepath.Join(p.Bin, "harness"), "history")
		history.Dir = p.Dir
		history.Env = runEnv(p, api)
		out, err := testbin.AsPerson(history).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "no task was held by two workers at once, none was integrated twice") || strings.Contains(string(out), "VIOLATION") {
			t.Errorf("harness history: %v\n%s", err, out)
		}
	}
}
