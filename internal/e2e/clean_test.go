package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// TestScenarioGitClean: an agent tidying the tree runs `git clean -fdx`,
// which would delete the harness's files (git ignores them through
// .git/info/exclude). The guard denies it and names the form that keeps
// them; the agent runs that, which is let through and removes its
// scratch file, and the task's validation then completes the last task,
// which says so instead of sending the agent to another claim.
func TestScenarioGitClean(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	id := p.add("Tidy the tree", "--validate", "test ! -e scratch.txt")
	api := fakeapi.New(t,
		fakeapi.Bash("harness claim "+id),
		fakeapi.Write(p.path("scratch.txt"), "left over\n"),
		fakeapi.Bash("git clean -fdx"),
		fakeapi.Bash("git clean -fd"),
		fakeapi.Bash("harness validate "+id),
		fakeapi.Text("The tree is tidy."),
	)
	res := p.run(api, "Work on the tasks.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}

	denied := toolResultsOf(api, "git clean -fdx")
	if len(denied) != 1 || !denied[0].IsError || !strings.Contains(denied[0].Text, "PreToolUse:Bash hook error:") {
		t.Fatalf("`git clean -fdx` was not denied by the PreToolUse hook: %+v", denied)
	}
	for _, want := range []string{"`git clean -fdx` may delete", "`git clean` without -x or -X: it keeps the files git ignores"} {
		if !strings.Contains(denied[0].Text, want) {
			t.Errorf("the denial the model saw does not say %q:\n%s", want, denied[0].Text)
		}
	}
	if kept := toolResultsOf(api, "git clean -fd\""); len(kept) != 1 || kept[0].IsError {
		t.Errorf("`git clean -fd` was not let through: %+v", kept)
	}
	if _, err := os.Stat(p.path("scratch.txt")); !os.IsNotExist(err) {
		t.Errorf("scratch.txt is still there (git clean -fd did not run): %v", err)
	}
	for _, name := range []string{"harness-tasks.json", "harness-progress.txt", ".harness-runtime"} {
		if _, err := os.Stat(p.path(name)); err != nil {
			t.Errorf("%s is gone after git clean -fd: %v", name, err)
		}
	}
	if tk := p.task(id); tk.Status != "completed" {
		t.Errorf("%s is %q, want completed", id, tk.Status)
	}
	validated := toolResultsOf(api, "harness validate "+id)
	if len(validated) != 1 || !strings.Contains(validated[0].Text, "next: none: all tasks completed") {
		t.Errorf("the last task's validate did not say every task is completed: %+v", validated)
	}
}
