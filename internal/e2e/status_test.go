package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// TestScenarioStatusLongJob: in a job of 45 tasks, `/harness status` has
// the model run `harness status`, whose output it shows as it is. The
// model reads the counts, the next task and the tasks that need a look,
// and a line that counts the rest, not a line for every task.
func TestScenarioStatusLongJob(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	for i := 1; i <= 45; i++ {
		p.add(fmt.Sprintf("Part %d", i), "--validate", "true")
	}
	api := fakeapi.New(t,
		fakeapi.Bash("harness status"),
		fakeapi.Text("45 tasks, none started; task-001 is next."),
	)
	res := p.run(api, "/harness status")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	trs := toolResultsOf(api, "harness status")
	if len(trs) != 1 || trs[0].IsError {
		t.Fatalf("`harness status` did not run: %+v", trs)
	}
	out := trs[0].Text
	for _, want := range []string{
		"tasks: pending=45 in_progress=0 completed=0 failed=0 blocked=0 total=45",
		"next:  task-001: Part 1",
		"[pending] task-020: Part 20 ",
		"(25 pending not listed: `harness status --all` lists every task",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the status the model read lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "[pending] task-"); n != 20 {
		t.Errorf("the status the model read lists %d tasks, want the next 20:\n%s", n, out)
	}
}
