package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// TestScenarioKeptJudgement: in a real session, the check after a tool
// call that changed no harness file keeps its judgement once the files
// have been still for two seconds, and the next PostToolUse ends on it
// before its packages are initialised ("quiet" in the debug log). The
// PreToolUse between them writes nothing the judgement rests on. A script
// that then completes the task by hand moves the tasks file: that
// PostToolUse runs whole, puts the file back and tells the model; the task
// completes only through `harness validate`.
func TestScenarioKeptJudgement(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	id := p.add("Write alpha", "--validate", "test -f alpha.txt")
	tasksFile := p.path("harness-tasks.json")
	var (
		mu          sync.Mutex
		claimed     string // the tasks file after the claim
		afterScript string // after the script ran and the hook ran
		notice      bool   // the request after the script carried the notice
	)
	api := fakeapi.New(t,
		fakeapi.Bash("harness claim "+id),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			mu.Lock()
			defer mu.Unlock()
			claimed = readOr(tasksFile, "")
			return fakeapi.Write(p.path("mark.py"), completeEveryTask)
		}),
		fakeapi.Bash("sleep 2.5"), // the files still for two seconds: the check after it keeps its judgement
		fakeapi.Bash("echo between"),
		fakeapi.Bash("python3 mark.py"),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			mu.Lock()
			defer mu.Unlock()
			afterScript = readOr(tasksFile, "")
			notice = r.LastUserContains("HARNESS TAMPER") && r.LastUserContains("harness-tasks.json was changed")
			return fakeapi.Bash("echo alpha > alpha.txt && harness validate " + id)
		}),
		fakeapi.Text("Done."),
	)
	res := p.run(api, "Finish the task.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}

	// The PostToolUse lines, one per tool call, in the calls' order.
	var quiet []bool
	for _, line := range strings.Split(strings.TrimSpace(readOr(p.HookLog, "")), "\n") {
		var e struct {
			Event string `json:"event"`
			Quiet bool   `json:"quiet"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("a debug log line that does not read: %q: %v", line, err)
		}
		if e.Event == "PostToolUse" {
			quiet = append(quiet, e.Quiet)
		}
	}
	// claim, Write, sleep, echo, the script, validate
	want := []bool{false, false, false, true, false, false}
	if !slices.Equal(quiet, want) {
		t.Errorf("PostToolUse ended early at %v, want %v (only after the call that followed a kept judgement)", quiet, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(claimed, `"in_progress"`) {
		t.Fatalf("the claim did not run as expected; state:\n%s", claimed)
	}
	if afterScript != claimed {
		t.Errorf("harness-tasks.json was not put back after the script:\nbefore:\n%s\nafter:\n%s", claimed, afterScript)
	}
	if !notice {
		t.Errorf("the model was not told of the revert in the request after the script")
	}
	if tk := p.task(id); tk.Status != "completed" {
		t.Errorf("%s is %q, want completed through harness validate", id, tk.Status)
	}
}
