package e2e

import (
	"strings"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// TestScenarioProjectCheck: with session_config.integration_check set, a
// task whose own check passes while its work breaks the project fails its
// attempt; the model reads why in the validate's output, the work is rolled
// back, and the next attempt, which leaves the project whole, completes.
func TestScenarioProjectCheck(t *testing.T) {
	t.Parallel()
	p, id := projectWithCheck(t)
	api := fakeapi.New(t,
		fakeapi.Bash("harness claim "+id),
		fakeapi.Bash("echo hello > greeting.txt && rm keep.txt"),
		fakeapi.Bash("harness validate "+id),
		fakeapi.Bash("harness claim "+id),
		fakeapi.Write(p.path("greeting.txt"), "hello\n"),
		fakeapi.Bash("harness validate "+id),
		fakeapi.Text("The greeting is written and the project is whole."),
	)
	res := p.run(api, "Work on the tasks.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	runs := toolResultsOf(api, "harness validate "+id)
	if len(runs) != 2 {
		t.Fatalf("`harness validate %s` ran %d times, want 2: %+v", id, len(runs), runs)
	}
	if !runs[0].IsError || !strings.Contains(runs[0].Text, "integration_check failed after the validation passed: keep.txt is gone") {
		t.Errorf("the first validate, whose work removed keep.txt, did not fail on the project's check:\n%s", runs[0].Text)
	}
	if !strings.Contains(runs[0].Text, "rolled back to") {
		t.Errorf("the failed attempt was not rolled back:\n%s", runs[0].Text)
	}
	if runs[1].IsError || !strings.Contains(runs[1].Text, "PASS integration_check") || !strings.Contains(runs[1].Text, "Completed "+id) {
		t.Errorf("the second validate did not pass both checks:\n%s", runs[1].Text)
	}
	if tk := p.task(id); tk.Status != "completed" || tk.Attempts != 1 {
		t.Errorf("%s: status %q attempts %d, want completed after one failed attempt", id, tk.Status, tk.Attempts)
	}
	if !p.exists("keep.txt") {
		t.Error("keep.txt is gone: the failed attempt was not rolled back")
	}
}

// TestScenarioGateProjectCheck: the model completes the last task (both
// checks pass), then breaks the project and ends its turn. The Stop hook's
// verification gate runs the project's check, reopens the task, and holds
// the stop with why; the model restores the file, completes the task
// again, and the run ends.
func TestScenarioGateProjectCheck(t *testing.T) {
	t.Parallel()
	p, id := projectWithCheck(t)
	var feedback string
	api := fakeapi.New(t,
		fakeapi.Bash("harness claim "+id),
		fakeapi.Write(p.path("greeting.txt"), "hello\n"),
		fakeapi.Bash("harness validate "+id),
		fakeapi.Bash("rm keep.txt"),
		fakeapi.Text("The greeting is written."),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			feedback = r.NewText()
			return fakeapi.Bash("git checkout -- keep.txt")
		}),
		fakeapi.Bash("harness claim "+id),
		fakeapi.Bash("harness validate "+id),
		fakeapi.Text("The greeting is written and keep.txt is back."),
	)
	res := p.run(api, "Work on the tasks.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	for _, want := range []string{stopFeedback, "verification gate", "the project's check (integration_check, blamed on the task this session completed last)", "keep.txt is gone", "harness claim " + id} {
		if !strings.Contains(feedback, want) {
			t.Errorf("the Stop hook's feedback after keep.txt was removed does not say %q:\n%s", want, feedback)
		}
	}
	runs := toolResultsOf(api, "harness validate "+id)
	if len(runs) != 2 || runs[1].IsError || !strings.Contains(runs[1].Text, "PASS integration_check") {
		t.Errorf("the second validate did not pass both checks: %+v", runs)
	}
	if tk := p.task(id); tk.Status != "completed" || tk.Attempts != 1 {
		t.Errorf("%s: status %q attempts %d, want completed after the reopened attempt", id, tk.Status, tk.Attempts)
	}
	if !strings.Contains(p.progressLog(), "regression detected at session end: the project's check") {
		t.Errorf("no regression line for the project's check in the log:\n%s", p.progressLog())
	}
}

// projectWithCheck is a project whose committed keep.txt stands for an
// earlier task's work, with one task (its check: greeting.txt exists) and
// the project's check that keep.txt is still there.
func projectWithCheck(t *testing.T) (*project, string) {
	t.Helper()
	p := newProject(t)
	p.writeFile("keep.txt", "an earlier task's work\n")
	p.git("add", "keep.txt")
	p.git("commit", "-q", "-m", "keep.txt")
	p.initState()
	id := p.add("Write the greeting", "--validate", "test -f greeting.txt")
	p.setConfig("integration_check", `"test -f keep.txt || { echo keep.txt is gone; exit 1; }"`)
	return p, id
}
