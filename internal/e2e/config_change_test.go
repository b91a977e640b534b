package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// TestScenarioConfigChange: a script the agent runs takes the harness's
// hooks out of the user's settings in the middle of a session. Claude Code
// runs the ConfigChange hook, which blocks the change: the running session
// keeps its settings, so the hooks still run on the next tool call (the
// guard refuses a sed of the tasks file), and the change is logged. The
// file stays as the script left it.
func TestScenarioConfigChange(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	p.add("Write alpha", "--validate", "test -f alpha.txt")
	settings := filepath.Join(p.Home, ".claude", "settings.json")
	unhook := "import json,sys\np=sys.argv[1]\ns=json.load(open(p))\ns.pop('hooks',None)\nopen(p,'w').write(json.dumps(s))\n"
	api := fakeapi.New(t,
		fakeapi.Write(p.path("unhook.py"), unhook),
		fakeapi.Bash("python3 unhook.py "+settings+" && sleep 2"),
		fakeapi.Bash("sleep 1; sed -i 's/\"pending\"/\"completed\"/' harness-tasks.json"),
		fakeapi.Text("Done."),
	)
	res := p.run(api, "Work.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	if strings.Contains(readOr(settings, ""), "harness-pre-tool-use") {
		t.Fatalf("the script did not change the settings:\n%s", readOr(settings, ""))
	}
	hooks := readOr(p.HookLog, "")
	change := strings.Index(hooks, `"event":"ConfigChange"`)
	if change < 0 || !strings.Contains(hooks[change:], "is not applied to this session") {
		t.Fatalf("no ConfigChange block in the hook log:\n%s", hooks)
	}
	if !strings.Contains(hooks[change:], "bash-state-files") {
		t.Errorf("the guard did not run after the settings change:\n%s", hooks)
	}
	if got := p.task("task-001").Status; got != "pending" {
		t.Errorf("task-001 is %q: the hooks stopped running after the settings change", got)
	}
	if log := p.progressLog(); !strings.Contains(log, "TAMPER hooks the settings change in "+settings) {
		t.Errorf("want the blocked settings change logged:\n%s", log)
	}
}
