package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
	"github.com/harness-agent/harness/internal/testbin"
)

// TestScenarioSandboxWorkers: `harness workers 2` at the sandboxed level
// (`harness install --sandbox`): each worker's commands run in Claude
// Code's OS sandbox, which the supervisor lets write the main tree (the
// state files, the repository's refs) and nothing else of the harness's
// (the record stays denied); they claim, commit in their own worktree and
// queue, no worker's hooks put back another's verb, and the supervisor
// integrates every task.
func TestScenarioSandboxWorkers(t *testing.T) {
	t.Parallel()
	p := newSandboxedProject(t)
	p.initState()
	for _, j := range workerJob[:3] {
		p.add(j.title, "--validate", j.check)
	}
	api := fakeapi.New(t, fakeapi.Loop(workerBrain))
	claude := RequireClaude(t)
	cmd := exec.Command(filepath.Join(p.Bin, "harness"), "workers", "2", "--", "--dangerously-skip-permissions")
	cmd.Dir = p.Dir
	trees := t.TempDir()
	cmd.Env = append(runEnv(p, api), "HARNESS_CLAUDE="+claude, noRetries, "HARNESS_WORKTREES="+trees)
	cmd = testbin.AsPerson(cmd)
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(4 * time.Minute):
		cmd.Process.Signal(os.Interrupt)
		err = <-done
		for k := 1; k <= 2; k++ {
			t.Logf("w%d's sessions:\n%s", k, readOr(filepath.Join(workersDirIn(trees), fmt.Sprintf("w%d.log", k)), "(none)"))
		}
		t.Logf("log:\n%s", p.progressLog())
	}
	out := buf.String()
	if err != nil || !strings.Contains(string(out), "job done: all 3 tasks integrated") {
		t.Fatalf("harness workers: %v\n%s\nrequests:\n%s", err, out, api.Summary())
	}
	for i := 1; i <= 3; i++ {
		if tk := p.task(fmt.Sprintf("task-%03d", i)); tk.Status != "completed" {
			t.Errorf("task-%03d is %s", i, tk.Status)
		}
	}
	if log := p.progressLog(); strings.Contains(log, "] TAMPER ") {
		t.Errorf("a worker's verb was put back as tampering:\n%s", log)
	}
	if st := p.harness("status", "--json"); !strings.Contains(st, `"trust_level": "sandboxed"`) {
		t.Errorf("status does not report the sandboxed level:\n%s", st)
	}
	if merges := p.git("log", "--merges", "--oneline", "main"); merges != "" {
		t.Errorf("merge commits on main:\n%s", merges)
	}
}
