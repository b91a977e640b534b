package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// TestScenarioImportCursorPlan: a plan made in Cursor's plan mode, brought
// into a session. The agent may import its pending to-dos (an import that
// only adds pending tasks), not a plan that says some are done (that is
// the person's word, refused with what to ask of them); the Stop hook
// then drives the imported tasks in their order, and the person's export
// writes `status: completed` back into the plan, where Cursor reads it.
func TestScenarioImportCursorPlan(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	const plan = ".cursor/plans/albums_7c1e.plan.md"
	const shipped = ".cursor/plans/covers_09ad.plan.md"
	for name, text := range map[string]string{
		plan: "---\nname: Albums\noverview: Store and serve the albums.\ntodos:\n" +
			"  - id: album-api\n    content: \"Serve the albums: list and page\"\n    status: pending\n    dependencies:\n      - album-store\n" +
			"  - id: album-store\n    content: Store the albums\n    status: pending\nisProject: false\n---\n\n# Albums\n",
		shipped: "---\nname: Covers\ntodos:\n  - id: covers\n    content: Store the covers\n    status: completed\n---\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p.path(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		p.writeFile(name, text)
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "plans")
	api := fakeapi.New(t,
		fakeapi.Bash("harness import "+shipped),
		fakeapi.Bash("harness import "+plan+" --validate true"),
		fakeapi.Text("The plan is in."),
		newWorker(p.Dir).Turn(),
	)
	res := p.run(api, "/harness run")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	refused := toolResultsOf(api, "harness import "+shipped)
	if len(refused) != 1 || !refused[0].IsError ||
		!strings.Contains(refused[0].Text, "refused inside a Claude Code session") ||
		!strings.Contains(refused[0].Text, "ask the user to run `harness import "+shipped+"` in their terminal") {
		t.Errorf("the import of a plan with a done to-do was not refused with what to ask: %+v", refused)
	}
	imported := toolResultsOf(api, "harness import "+plan)
	if len(imported) != 1 || imported[0].IsError || !strings.Contains(imported[0].Text, "added task-001 ← cursor:album-api: Serve the albums: list and page (waits on task-002)") {
		t.Fatalf("the agent's import of pending to-dos did not run: %+v", imported)
	}
	fb := stopFeedbacks(api)
	if len(fb) == 0 || !strings.Contains(fb[0], "harness claim task-002") {
		t.Errorf("the first Stop did not name the to-do the other waits on (task-002, album-store):\n%s", strings.Join(fb, "\n---\n"))
	}
	for id, source := range map[string]string{"task-001": "cursor:album-api", "task-002": "cursor:album-store"} {
		if got := p.task(id); got.Status != "completed" || got.Source != source {
			t.Errorf("%s is %q from %q, want completed from %s", id, got.Status, got.Source, source)
		}
	}
	out := p.harness("export", "--from", plan, "--out", plan)
	if !strings.Contains(out, "marked done: cursor:album-api") || !strings.Contains(out, "marked done: cursor:album-store") {
		t.Errorf("the person's export did not mark both to-dos:\n%s", out)
	}
	if got := p.readFile(plan); strings.Count(got, "    status: completed\n") != 2 || !strings.Contains(got, "# Albums") {
		t.Errorf("the plan does not say both to-dos are completed, or lost its text:\n%s", got)
	}
}
