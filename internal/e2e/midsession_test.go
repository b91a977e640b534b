package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// TestScenarioInitMidSession: the harness set up inside a session, as
// /harness does, so the session's start found nothing. Its first turn end
// takes the log's recent lines as the session's own and remembers where
// they begin; however long the session's part of the log grows after
// (here 2,500 lines between its two task outcomes), its turn ends count
// both, and the session may stop at max_tasks_per_session = 2 with a third
// task pending. (Reading the last 2,000 lines at every turn end saw one
// outcome and ordered the third task.)
func TestScenarioInitMidSession(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	add := func(title, file string) string {
		return fmt.Sprintf("harness add %q --validate 'test -f %s'", title, file)
	}
	api := fakeapi.New(t,
		fakeapi.Bash("harness init"),
		fakeapi.Bash(add("One", "task-001.txt")+" && "+add("Two", "task-002.txt")+" && "+add("Three", "task-003.txt")),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			// The person, in their terminal: two tasks a session.
			p.harness("config", "max_tasks_per_session", "2")
			return fakeapi.Bash("harness claim task-001")
		}),
		fakeapi.Write(p.path("task-001.txt"), "one\n"),
		fakeapi.Bash("harness validate task-001"),
		fakeapi.Text("One is done."),
		// The Stop hook blocks (work remains); the session goes on.
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			// A long stretch of the session's own lines (checkpoints of
			// the next task), appended as the harness appends them.
			f, err := os.OpenFile(p.path("harness-progress.txt"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Error(err)
				return fakeapi.Text("the log is gone")
			}
			var b strings.Builder
			for i := range 2500 {
				fmt.Fprintf(&b, "[2026-01-01T00:00:00Z] [SESSION-0] CHECKPOINT [task-002] step=1/2 \"part %d\"\n", i)
			}
			if _, err := f.WriteString(b.String()); err != nil {
				t.Error(err)
			}
			f.Close()
			return fakeapi.Bash("harness claim task-002")
		}),
		fakeapi.Write(p.path("task-002.txt"), "two\n"),
		fakeapi.Bash("harness validate task-002"),
		fakeapi.Text("Two is done."),
		// Only were the limit missed: the worker goes on as told.
		newWorker(p.Dir).Turn(),
	)
	res := p.run(api, "/harness run")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	for _, id := range []string{"task-001", "task-002"} {
		if got := p.task(id).Status; got != "completed" {
			t.Errorf("%s is %q, want completed", id, got)
		}
	}
	if got := p.task("task-003").Status; got != "pending" {
		t.Errorf("task-003 is %q, want pending: the session passed max_tasks_per_session", got)
	}
	fb := stopFeedbacks(api)
	if len(fb) != 1 || !strings.Contains(fb[0], "harness claim task-002") {
		t.Errorf("want one Stop block, after the first task, naming task-002; got %d:\n%s", len(fb), strings.Join(fb, "\n---\n"))
	}
	if res.Result != "Two is done." {
		t.Errorf("the session did not end after the second task: %v", res)
	}
	// The user is told why the session stopped (the Stop hook's message,
	// as the hooks' debug log has it).
	if hooks := readOr(p.HookLog, ""); !strings.Contains(hooks, "max_tasks_per_session=2 reached (2 task outcomes in SESSION-0)") {
		t.Errorf("no Stop told the user the limit was reached; the hooks' log:\n%s", clip(hooks))
	}
}
