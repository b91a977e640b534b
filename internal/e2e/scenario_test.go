package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// The harness scenarios: the real hooks, registered by the real installer,
// called by the real Claude Code CLI, on a real git repository, with state
// made by the real `harness` command. The model is scripted (package
// fakeapi); everything else is what a user runs. docs/e2e.md says what each
// scenario proves.

// TestScenarioInactive: without .harness-active the hooks are invisible. A
// session with pending tasks, tool calls and a stop behaves exactly as the
// same session with no hooks at all, and the state is left byte for byte
// but for the log's one line saying the harness was switched off.
func TestScenarioInactive(t *testing.T) {
	t.Parallel()
	script := func(p *project) []fakeapi.Turn {
		return []fakeapi.Turn{
			fakeapi.Bash("echo plain-bash-ok && git status --porcelain"),
			fakeapi.Write(p.path("notes.txt"), "notes\n"),
			fakeapi.Read(p.path("README.md")),
			fakeapi.Text("All done."),
		}
	}
	seed := func(p *project) {
		p.initState()
		p.add("Write alpha", "--validate", "test -f alpha.txt")
		if err := os.Remove(p.path(".harness-active")); err != nil {
			t.Fatal(err)
		}
	}

	// The control: the same project and script with no hooks registered.
	var control struct {
		res  *Result
		reqs []*fakeapi.Request
		p    *project
	}
	control.p = newProject(t)
	seed(control.p)
	WriteSettings(t, control.p.Home, "{}\n")
	capi := fakeapi.New(t, script(control.p)...)
	control.res = control.p.run(capi, "Note something down.")
	control.reqs = capi.MainRequests()

	p := newProject(t)
	seed(p)
	tasksBefore := p.readFile("harness-tasks.json")
	logBefore := p.progressLog()
	locksBefore := listDir(t, p.LockDir)
	filesBefore := harnessFiles(t, p.Dir)

	api := fakeapi.New(t, script(p)...)
	res := p.run(api, "Note something down.")

	if res.ExitCode != 0 || res.Result != "All done." {
		t.Fatalf("want the session to end normally with the model's text (no Stop block), got %v", res)
	}
	reqs := api.MainRequests()
	if len(reqs) != len(control.reqs) {
		t.Errorf("%d model requests with the hooks, %d without: inactive hooks changed the session", len(reqs), len(control.reqs))
	}
	for _, want := range []string{sessionStartText, stopFeedback, "hook error"} {
		if r := api.Find(want); r != nil {
			t.Errorf("request #%d carries %q, an inactive harness must stay silent:\n%s", r.Index, want, r.NewText())
		}
	}
	// Tool results as the model saw them, paths normalised: identical.
	norm := func(p *project, trs []fakeapi.ToolResult) []string {
		var out []string
		for _, tr := range trs {
			out = append(out, fmt.Sprintf("error=%v %s", tr.IsError, strings.ReplaceAll(tr.Text, p.Dir, "<project>")))
		}
		return out
	}
	got, want := norm(p, api.Last().ToolResults()), norm(control.p, control.reqs[len(control.reqs)-1].ToolResults())
	if !slices.Equal(got, want) {
		t.Errorf("tool results differ from the run without hooks:\nwith hooks:    %q\nwithout hooks: %q", got, want)
	}
	if control.res.Result != res.Result {
		t.Errorf("result %q, without hooks %q", res.Result, control.res.Result)
	}

	if after := p.readFile("harness-tasks.json"); after != tasksBefore {
		t.Errorf("harness-tasks.json changed in an inactive session:\nbefore:\n%s\nafter:\n%s", tasksBefore, after)
	}
	// The one line a switching off leaves in the job's story, written by
	// the session's first hook.
	switchedOff := "] INIT Harness switched off: .harness-active was removed outside a running session\n"
	if added := newLines(logBefore, p.progressLog()); strings.Count(added, "\n") != 1 || !strings.HasSuffix(added, switchedOff) {
		t.Errorf("harness-progress.txt gained other lines than the switching off in an inactive session:\n%s", added)
	}
	if after := listDir(t, p.LockDir); !slices.Equal(after, locksBefore) {
		t.Errorf("lock directory changed in an inactive session: %v -> %v", locksBefore, after)
	}
	if after := harnessFiles(t, p.Dir); !slices.Equal(after, filesBefore) {
		t.Errorf("harness files in the project changed in an inactive session: %v -> %v", filesBefore, after)
	}
}

// TestScenarioNoProject: in a repository the harness was never set up in,
// where a user who installed it works on anything else, every hook Claude
// Code runs ends before its packages are initialised (internal/quiet): the
// debug log has each one's line marked so, the session goes as it would
// without hooks, and nothing of the harness is written anywhere.
func TestScenarioNoProject(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	locksBefore := listDir(t, p.LockDir)
	// The install registers each hook in the exec form, which Claude Code
	// starts without a shell: a hook of the same form beside ours records
	// the process that started it.
	settingsPath := filepath.Join(p.Home, ".claude", "settings.json")
	var settings map[string]any
	if err := json.Unmarshal([]byte(readOr(settingsPath, "")), &settings); err != nil {
		t.Fatal(err)
	}
	hooks := settings["hooks"].(map[string]any)
	for event, groups := range hooks {
		for _, g := range groups.([]any) {
			for _, h := range g.(map[string]any)["hooks"].([]any) {
				if args, ok := h.(map[string]any)["args"].([]any); !ok || len(args) != 0 {
					t.Errorf("%s: the install wrote %v, want the exec form (an empty args)", event, h)
				}
			}
		}
	}
	parentFile := filepath.Join(t.TempDir(), "parent")
	probe := filepath.Join(t.TempDir(), "parent.sh")
	if err := os.WriteFile(probe, []byte("#!/bin/sh\ncat /proc/$PPID/comm >"+parentFile+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hooks["UserPromptSubmit"] = append(hooks["UserPromptSubmit"].([]any),
		map[string]any{"hooks": []any{map[string]any{"type": "command", "command": probe, "args": []any{}}}})
	WriteSettings(t, p.Home, settings)
	api := fakeapi.New(t,
		fakeapi.Bash("echo plain-bash-ok && git status --porcelain"),
		fakeapi.Write(p.path("notes.txt"), "notes\n"),
		fakeapi.Read(p.path("README.md")),
		fakeapi.Text("All done."),
	)
	res := p.run(api, "Note something down.")

	if res.ExitCode != 0 || res.Result != "All done." {
		t.Fatalf("want the session to end normally with the model's text, got %v", res)
	}
	for _, want := range []string{sessionStartText, stopFeedback, "hook error", "HARNESS"} {
		if r := api.Find(want); r != nil {
			t.Errorf("request #%d carries %q, hooks without a project must stay silent:\n%s", r.Index, want, r.NewText())
		}
	}
	if got := api.Last().ToolResults(); len(got) != 3 || got[0].Text != "plain-bash-ok" || !strings.Contains(got[2].Text, "e2e project") {
		t.Errorf("the tool results: %+v", got)
	}
	if got := p.readFile("notes.txt"); got != "notes\n" {
		t.Errorf("notes.txt holds %q", got)
	}

	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(readOr(p.HookLog, "")), "\n") {
		var e struct {
			Event    string `json:"event"`
			Decision string `json:"decision"`
			Quiet    bool   `json:"quiet"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Errorf("a debug log line that does not read: %q: %v", line, err)
			continue
		}
		if !e.Quiet || e.Decision != "silent" {
			t.Errorf("a hook ran whole, or said something, without a project: %s", line)
		}
		seen[e.Event]++
	}
	for _, event := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"} {
		if seen[event] == 0 {
			t.Errorf("no %s hook in the debug log (%v): the hooks did not run", event, seen)
		}
	}
	if seen["PreToolUse"] != 3 || seen["PostToolUse"] != 3 {
		t.Errorf("%d PreToolUse and %d PostToolUse lines for 3 tool calls", seen["PreToolUse"], seen["PostToolUse"])
	}

	if parent := strings.TrimSpace(readOr(parentFile, "(the probe did not run)")); parent == "sh" || parent == "dash" || parent == "bash" || strings.HasPrefix(parent, "(") {
		t.Errorf("a hook in the exec form was started by %q, want Claude Code itself", parent)
	}

	if files := harnessFiles(t, p.Dir); len(files) != 0 {
		t.Errorf("harness files appeared in the project: %v", files)
	}
	if after := listDir(t, p.LockDir); !slices.Equal(after, locksBefore) {
		t.Errorf("lock directory changed: %v -> %v", locksBefore, after)
	}
	if records := listDir(t, filepath.Join(p.Home, ".local", "state", "harness")); len(records) != 0 {
		t.Errorf("the harness wrote under the home's state directory: %v", records)
	}
}

// harnessFiles lists the project's harness-* and .harness-* files.
func harnessFiles(t *testing.T, dir string) []string {
	var out []string
	for _, name := range listDir(t, dir) {
		base := filepath.Base(name)
		if !strings.HasPrefix(name, ".git"+string(filepath.Separator)) && name != ".git" &&
			(strings.HasPrefix(base, "harness-") || strings.HasPrefix(base, ".harness-")) {
			out = append(out, name)
		}
	}
	return out
}

// TestScenarioPrematureStop: the model claims victory with two tasks pending.
// The Stop hook refuses, naming the next task and the command to start it;
// the model, doing only what the feedback says, works through claim and
// validate; the run ends with every task completed, committed, the marker
// removed and STATS logged.
func TestScenarioPrematureStop(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	a := p.add("Write the first file", "--validate", "test -f task-001.txt")
	b := p.add("Write the second file", "--depends-on", a, "--validate", "test -f task-002.txt")
	logBefore := p.progressLog()
	baseline := p.git("rev-parse", "HEAD")

	w := newWorker(p.Dir)
	api := fakeapi.New(t, w.Turn())
	res := p.run(api, "Work through the harness tasks.")

	if res.ExitCode != 0 || res.IsError || res.Result == "" {
		t.Fatalf("want a clean end of session, got %v", res)
	}
	if first := api.Request(0); !first.Contains(sessionStartText) || !first.Contains(a) {
		t.Errorf("first request lacks the SessionStart context naming %s:\n%s", a, clip(first.NewText()))
	}
	fb := stopFeedbacks(api)
	if len(fb) == 0 {
		t.Fatalf("the Stop hook never blocked the premature \"all done\" (tasks were pending)")
	}
	if !strings.Contains(fb[0], "harness claim "+a) {
		t.Errorf("first Stop feedback does not tell the model to run `harness claim %s`:\n%s", a, fb[0])
	}
	if !slices.ContainsFunc(fb, func(s string) bool { return strings.Contains(s, "harness claim "+b) }) {
		t.Errorf("no Stop feedback named the second task (`harness claim %s`); feedbacks:\n%s", b, strings.Join(fb, "\n---\n"))
	}
	if got := w.Claimed(); !slices.Equal(got, []string{a, b}) {
		t.Errorf("the model claimed %v as told by the Stop hook, want [%s %s]", got, a, b)
	}
	for _, verb := range []string{"harness claim", "harness validate"} {
		for _, tr := range toolResultsOf(api, verb) {
			if tr.IsError {
				t.Errorf("`%s` failed in the session: %s", verb, tr.Text)
			}
		}
	}

	for id, tk := range p.tasks() {
		if tk.Status != "completed" || tk.CompletedAt == nil {
			t.Errorf("%s: status %q completed_at %v, want completed", id, tk.Status, tk.CompletedAt)
		}
	}
	if p.exists(".harness-active") {
		t.Errorf(".harness-active still present after every task completed")
	}
	added := newLines(logBefore, p.progressLog())
	for _, want := range []string{"Starting [" + a + "]", "Completed [" + a + "]", "Starting [" + b + "]", "Completed [" + b + "]"} {
		if !strings.Contains(added, want) {
			t.Errorf("progress log lacks %q; the session appended:\n%s", want, added)
		}
	}
	if !regexp.MustCompile(`(?m)\] STATS .*completed=2\b`).MatchString(added) {
		t.Errorf("no STATS line with completed=2 logged; the session appended:\n%s", added)
	}
	// validate commits the task's work: both files are in git, the tree is
	// clean, history moved past the baseline.
	if p.git("rev-parse", "HEAD") == baseline {
		t.Errorf("no commit since the baseline: harness validate did not commit")
	}
	if files := p.git("ls-files"); !strings.Contains(files, "task-001.txt") || !strings.Contains(files, "task-002.txt") {
		t.Errorf("the tasks' files are not committed; git ls-files:\n%s", files)
	}
	if st := p.git("status", "--porcelain"); strings.TrimSpace(strings.ReplaceAll(st, "?? harness-init.sh", "")) != "" {
		t.Errorf("uncommitted changes left behind:\n%s", st)
	}
}

// statusRe finds a task's status line in harness-tasks.json, whatever its
// spacing.
var statusRe = regexp.MustCompile(`"status":\s*"failed"`)

// TestScenarioTamper: a failed task cannot be passed by hand. The model's
// Edit of harness-tasks.json and its `sed -i` on it are both denied, the
// file stays byte for byte, and the model reads the denial.
func TestScenarioTamper(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	id := p.add("Make the impossible pass", "--validate", "false", "--max-attempts", "1")
	tasksFile := p.path("harness-tasks.json")

	var (
		mu       sync.Mutex
		snapshot string // the state right before the tampering
		afterEd  string // after the Edit attempt
		afterSed string // after the sed attempt
	)
	read := func() string { return readOr(tasksFile, "") }
	api := fakeapi.New(t,
		fakeapi.Bash("harness claim "+id),
		fakeapi.Bash("harness validate "+id), // fails: attempts 1/1, failed for good
		fakeapi.Read(tasksFile),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			mu.Lock()
			defer mu.Unlock()
			snapshot = read()
			old := statusRe.FindString(snapshot)
			if old == "" {
				return fakeapi.Text("no failed status to edit") // asserted below
			}
			return fakeapi.Edit(tasksFile, old, `"status": "completed"`)
		}),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			mu.Lock()
			defer mu.Unlock()
			afterEd = read()
			return fakeapi.Bash(`sed -i 's/"status": *"failed"/"status": "completed"/' harness-tasks.json`)
		}),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			mu.Lock()
			defer mu.Unlock()
			afterSed = read()
			return fakeapi.Text("The task is complete.")
		}),
	)
	res := p.run(api, "Get the task passing.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	if tk := p.task(id); tk.Status != "failed" {
		t.Fatalf("%s is %q, want failed: the tampering worked or the validation did not fail it", id, tk.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if !statusRe.MatchString(snapshot) {
		t.Fatalf("the task was not failed before the tampering (claim/validate did not run as expected); state:\n%s", snapshot)
	}

	editRes := toolResultsOf(api, `"old_string"`)
	sedRes := toolResultsOf(api, "sed -i")
	check := func(what, prefix string, trs []fakeapi.ToolResult, after string) {
		t.Helper()
		if len(trs) != 1 {
			t.Errorf("%s: want one tool result, got %d", what, len(trs))
			return
		}
		if !trs[0].IsError || !strings.Contains(trs[0].Text, prefix) {
			t.Errorf("%s was not denied by the PreToolUse hook; the model saw (error=%v): %s", what, trs[0].IsError, trs[0].Text)
		} else if reason := strings.TrimSpace(trs[0].Text[strings.Index(trs[0].Text, prefix)+len(prefix):]); reason == "" {
			t.Errorf("%s denied without a reason", what)
		}
		if after != snapshot {
			t.Errorf("harness-tasks.json changed by the %s:\nbefore:\n%s\nafter:\n%s", what, snapshot, after)
		}
	}
	check("Edit of harness-tasks.json", "PreToolUse:Edit hook error:", editRes, afterEd)
	check("sed -i on harness-tasks.json", "PreToolUse:Bash hook error:", sedRes, afterSed)
	// The denial reached the model in the very next request.
	for _, c := range []struct {
		trs    []fakeapi.ToolResult
		prefix string
	}{{editRes, "PreToolUse:Edit hook error:"}, {sedRes, "PreToolUse:Bash hook error:"}} {
		if len(c.trs) == 1 {
			if r := afterToolResult(api, c.trs[0].ToolUseID); r == nil || !r.LastUserContains(c.prefix) {
				t.Errorf("the request after the denied call did not show the model %q", c.prefix)
			}
		}
	}
}

// TestScenarioTamperBetweenSessions: a completion forged while no session
// runs (by a process the last one left behind; here the test) is put back
// by the next session's start before the session builds on it, and the
// model reads why in its first request; the task is then done for real.
func TestScenarioTamperBetweenSessions(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	id := p.add("Write the file", "--validate", "test -f task-001.txt")
	forged := pendingRe.ReplaceAllString(p.readFile("harness-tasks.json"), `"status": "completed"`)
	p.writeFile("harness-tasks.json", forged)
	if tk := p.task(id); tk.Status != "completed" {
		t.Fatalf("the forgery did not take: %s is %q", id, tk.Status)
	}

	api := fakeapi.New(t, honestly(p, id, "task-001.txt")...)
	res := p.run(api, "Work on the tasks.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	first := api.Request(0)
	for _, want := range []string{"HARNESS TAMPER", id + " was completed outside `harness validate`", sessionStartText} {
		if !first.Contains(want) {
			t.Errorf("the first request lacks %q:\n%s", want, clip(first.NewText()))
		}
	}
	if trs := toolResultsOf(api, "harness claim"); len(trs) != 1 || trs[0].IsError {
		t.Errorf("`harness claim %s` after the forgery was put back: %+v", id, trs)
	}
	if tk := p.task(id); tk.Status != "completed" {
		t.Errorf("%s is %q, want completed by `harness validate`", id, tk.Status)
	}
	log := p.progressLog()
	for _, want := range []string{"TAMPER harness-tasks.json was changed (" + id + " was completed outside `harness validate`)", "Completed [" + id + "]"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
}

// TestScenarioAdoptInitScriptMidSession: a person changes harness-init.sh
// while a session runs and keeps the change with `harness adopt --yes` in
// their own terminal. The session's next tool call is checked as every
// call is, and the script stays as the person left it: no TAMPER, nothing
// put back (without the adopt, the check puts the script back:
// adopt_init_script.txtar).
func TestScenarioAdoptInitScriptMidSession(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	id := p.add("Write the file", "--validate", "test -f task-001.txt")
	const before, after = "echo setting up\n", "echo setting up, the person's way\n"
	p.writeFile("harness-init.sh", before)

	var adoptOut string
	var adoptCode int
	work := honestly(p, id, "task-001.txt")
	script := append([]fakeapi.Turn{work[0], fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
		// The person, in their terminal, while the session works.
		writeFile(t, p.path("harness-init.sh"), []byte(after), 0o755)
		adoptOut, adoptCode = p.harnessIn(p.Dir, "adopt", "--yes")
		return work[1]
	})}, work[2:]...)
	api := fakeapi.New(t, script...)
	res := p.run(api, "Work on the tasks.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	if adoptCode != 0 || !strings.Contains(adoptOut, "harness adopt: harness-init.sh as it is now: the sessions start with it") {
		t.Errorf("harness adopt --yes exited %d:\n%s", adoptCode, adoptOut)
	}
	if got := p.readFile("harness-init.sh"); got != after {
		t.Errorf("harness-init.sh is %q after the session, want the person's %q", got, after)
	}
	log := p.progressLog()
	if strings.Contains(log, "TAMPER harness-init.sh") {
		t.Errorf("the adopted script was put back:\n%s", log)
	}
	if !strings.Contains(log, "INIT Adopted harness-init.sh as it is now") {
		t.Errorf("the log lacks the adopt of the script:\n%s", log)
	}
	if trs := toolResultsOf(api, "harness validate"); len(trs) != 1 || trs[0].IsError {
		t.Errorf("`harness validate %s` after the adopt: %+v", id, trs)
	}
	for i := range api.Requests() {
		if r := api.Request(i); r.Contains("HARNESS TAMPER") {
			t.Errorf("request %d tells the model of a TAMPER:\n%s", i, clip(r.NewText()))
		}
	}
}

// honestly is the script of a session that does task id for real: it
// claims it, writes the file its validation tests for, validates it, and
// then answers as a worker until the Stop hook lets it go.
func honestly(p *project, id, file string) []fakeapi.Turn {
	return []fakeapi.Turn{
		fakeapi.Bash("harness claim " + id),
		fakeapi.Write(p.path(file), "done\n"),
		fakeapi.Bash("harness validate " + id),
		newWorker(p.Dir).Turn(),
	}
}

// pendingRe finds a task's pending status in harness-tasks.json.
var pendingRe = regexp.MustCompile(`"status": *"pending"`)

// quotedRecover finds the recovery command a hook quotes, in backticks.
var quotedRecover = regexp.MustCompile("`(harness recover[^`]*)`")

// TestScenarioRecovery: a session that died mid-task is recovered by the
// next one, following the protocol's decision matrix.
func TestScenarioRecovery(t *testing.T) {
	t.Parallel()

	// No uncommitted work, no task commits, no checkpoints: the task is
	// failed with [SESSION_TIMEOUT] at session start, and the first
	// request says so.
	t.Run("no work", func(t *testing.T) {
		t.Parallel()
		p := newProject(t)
		p.initState()
		id := p.add("Interrupted with nothing done", "--validate", "test -f task-001.txt", "--max-attempts", "1")
		p.harness("claim", id)
		if tk := p.task(id); tk.Status != "in_progress" {
			t.Fatalf("harness claim left %s %q, want in_progress", id, tk.Status)
		}
		logBefore := p.progressLog()

		api := fakeapi.New(t, fakeapi.Text("Checked the state."))
		res := p.run(api, "Continue the work.")
		if res.ExitCode != 0 {
			t.Fatalf("session failed: %v", res)
		}
		first := api.Request(0)
		if !first.Contains(sessionStartText) || !first.Contains("SESSION_TIMEOUT") || !first.Contains(id) {
			t.Errorf("first request does not tell the model %s was failed with SESSION_TIMEOUT:\n%s", id, clip(first.NewText()))
		}
		tk := p.task(id)
		if tk.Status != "failed" || tk.Attempts != 1 {
			t.Errorf("%s: status %q attempts %d, want failed with attempts 1", id, tk.Status, tk.Attempts)
		}
		if !slices.ContainsFunc(tk.ErrorLog, func(s string) bool { return strings.Contains(s, "[SESSION_TIMEOUT]") }) {
			t.Errorf("%s error_log %q lacks a [SESSION_TIMEOUT] entry", id, tk.ErrorLog)
		}
		if added := newLines(logBefore, p.progressLog()); !strings.Contains(added, "RECOVERY ["+id+"]") {
			t.Errorf("no RECOVERY [%s] line logged; the session appended:\n%s", id, added)
		}
	})

	// Committed work for the task, validation passes: the session is told
	// to run `harness recover`, which completes the task.
	t.Run("committed work", func(t *testing.T) {
		t.Parallel()
		p := newProject(t)
		p.initState()
		id := p.add("Interrupted after committing", "--validate", "test -f task-001.txt")
		p.harness("claim", id)
		p.writeFile("task-001.txt", "done before the crash\n")
		p.git("add", "task-001.txt")
		p.git("commit", "-q", "-m", id+": write the file")
		logBefore := p.progressLog()

		// The model runs the recovery command exactly as the context
		// quotes it.
		var recoverCmd string
		api := fakeapi.New(t,
			fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
				m := quotedRecover.FindStringSubmatch(r.NewText())
				if m == nil {
					return fakeapi.Text("nothing to recover") // asserted below
				}
				recoverCmd = m[1]
				return fakeapi.Bash(recoverCmd)
			}),
			newWorker(p.Dir).Turn(),
		)
		res := p.run(api, "Continue the work.")
		if res.ExitCode != 0 {
			t.Fatalf("session failed: %v", res)
		}
		if first := api.Request(0); !first.Contains(sessionStartText) || recoverCmd == "" || !first.Contains(id) {
			t.Fatalf("the SessionStart context does not tell the model to run `harness recover` for %s (committed work for an in_progress task):\n%s", id, clip(first.NewText()))
		}
		trs := toolResultsOf(api, recoverCmd)
		if len(trs) != 1 || trs[0].IsError {
			t.Errorf("`%s`, as the SessionStart context words it, failed: %+v", recoverCmd, trs)
		}
		// The task must be completed by the recovery itself, not by a
		// later validate the Stop hook asks for.
		if slices.ContainsFunc(toolResultsOf(api, "harness validate "+id), func(tr fakeapi.ToolResult) bool { return !tr.IsError }) {
			t.Errorf("%s was completed by a later `harness validate`, not by `%s`", id, recoverCmd)
		}
		if tk := p.task(id); tk.Status != "completed" {
			t.Errorf("%s is %q after `%s`, want completed", id, tk.Status, recoverCmd)
		}
		added := newLines(logBefore, p.progressLog())
		if !strings.Contains(added, "RECOVERY ["+id+"]") {
			t.Errorf("no RECOVERY [%s] line logged; the session appended:\n%s", id, added)
		}
	})
}

// The commands the SessionStart context shows the model: the one to run
// now, and the checkpoint step of the cycle, as a template.
var (
	doNow              = regexp.MustCompile("do now: run `(harness [^`]+)`")
	checkpointTemplate = regexp.MustCompile(`harness checkpoint <id>[^\n]*`)
)

// TestScenarioAdviceRuns: the commands the hooks put in front of the model
// work when typed as shown. The model follows the SessionStart context
// literally: its "do now" command, then the cycle's checkpoint template
// filled in, then the validation.
func TestScenarioAdviceRuns(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	id := p.add("Write the file", "--validate", "test -f task-001.txt")

	var first, checkpoint string
	api := fakeapi.New(t,
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			m := doNow.FindStringSubmatch(r.NewText())
			if m == nil {
				return fakeapi.Text("no command to run") // asserted below
			}
			first = m[1]
			return fakeapi.Bash(first)
		}),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			tmpl := checkpointTemplate.FindString(r.Text())
			if tmpl == "" {
				return fakeapi.Text("no checkpoint template") // asserted below
			}
			checkpoint = strings.NewReplacer("<id>", id, "M/N", "1/2", `"what was done"`, `"file written"`).Replace(strings.TrimSpace(tmpl))
			return fakeapi.Bash(checkpoint)
		}),
		fakeapi.Write(p.path("task-001.txt"), "done\n"),
		fakeapi.Bash("harness validate "+id),
		newWorker(p.Dir).Turn(),
	)
	res := p.run(api, "Work on the tasks.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	if first != "harness claim "+id {
		t.Fatalf("the SessionStart context's \"do now\" is %q, want `harness claim %s`:\n%s", first, id, clip(api.Request(0).NewText()))
	}
	if checkpoint == "" {
		t.Fatalf("the SessionStart context shows no checkpoint command template (harness checkpoint <id> …)")
	}
	for _, cmd := range []string{first, checkpoint} {
		if trs := toolResultsOf(api, cmd); len(trs) != 1 || trs[0].IsError {
			// It caught: the cycle text said `--step M/N` while the
			// verb takes `harness checkpoint ID M/N DESCRIPTION`, and
			// the context said `harness recover task-001` while the
			// verb takes no id.
			t.Errorf("`%s`, typed as the hook shows it, failed: %+v", cmd, trs)
		}
	}
	if tk := p.task(id); tk.Status != "completed" || len(tk.Checkpoints) != 1 {
		t.Errorf("%s: status %q with %d checkpoint(s), want completed with 1", id, tk.Status, len(tk.Checkpoints))
	}
}

// TestScenarioStartUnusable: the session start cannot take the session
// lock (its directory cannot be made, under a regular file), so the model
// is told to do no harness work in this session; it answers and ends its
// turn, and the Stop hook lets it end. Before, the same Stop blocked with
// "run `harness claim task-001`", the work the start had told it to leave.
func TestScenarioStartUnusable(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	p.add("Write the file", "--validate", "test -f task-001.txt")
	file := filepath.Join(t.TempDir(), "afile")
	writeFile(t, file, []byte("not a directory\n"), 0o644)
	api := fakeapi.New(t,
		fakeapi.Text("The harness cannot run here: its lock directory cannot be made. Please fix HARNESS_LOCK_DIR."),
	)
	res := p.run(api, "Work on the tasks.", "HARNESS_LOCK_DIR="+filepath.Join(file, "locks"))
	toldToLeaveIt(t, api, res, "cannot take the harness session lock", "do no harness work in this session")
}

// toldToLeaveIt checks a session whose start told the model the harness
// cannot run (its first request says each of told, and orders no claim):
// the turn ended at the model's answer, with no Stop feedback ordering the
// work it was told to leave.
func toldToLeaveIt(t *testing.T, api *fakeapi.Server, res *Result, told ...string) {
	t.Helper()
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	first := api.Request(0)
	for _, want := range told {
		if !first.Contains(want) {
			t.Errorf("the first request does not say %q:\n%s", want, clip(first.NewText()))
		}
	}
	if first.Contains("do now: run `harness claim") {
		t.Errorf("the first request still orders a claim:\n%s", clip(first.NewText()))
	}
	if fb := stopFeedbacks(api); len(fb) > 0 {
		t.Errorf("the Stop hook ordered harness work the session start had told the model to leave:\n%s", fb[0])
	}
	if n := len(api.MainRequests()); n != 1 {
		t.Errorf("%d requests, want 1: the turn did not end at the model's answer", n)
	}
}

// TestScenarioStartWithoutGit: git cannot be found on the PATH Claude Code
// runs the hooks with. The start tells the model the harness cannot run (a
// claim records a commit, a validation makes one); it answers and the turn
// ends. Before, the context said "do now: run `harness claim task-001`"
// beside "git: not installed", and the Stop blocked on that claim, which
// fails without git.
func TestScenarioStartWithoutGit(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	p.add("Write the file", "--validate", "test -f task-001.txt")
	noGit := t.TempDir()
	for _, prog := range []string{"sh", "bash"} {
		if path, err := exec.LookPath(prog); err == nil {
			if err := os.Symlink(path, filepath.Join(noGit, prog)); err != nil {
				t.Fatal(err)
			}
		}
	}
	api := fakeapi.New(t,
		fakeapi.Text("git is not installed here, so the harness cannot run. Please install git."),
	)
	res := p.run(api, "Work on the tasks.", "PATH="+p.Bin+string(os.PathListSeparator)+noGit)
	toldToLeaveIt(t, api, res, "git is not installed")
}

// TestScenarioNextTaskWithoutCheck: the next task has no validation command
// (a plan imported without checks). The start says to give it one first,
// with the exact command; the model does (a check where there is none is
// the agent's to add), claims the task, does it and validates it. Before,
// the start said "run `harness claim task-001`", which a claim refuses.
func TestScenarioNextTaskWithoutCheck(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	p.add("Write alpha") // (it warns that the task cannot be claimed yet)
	const id = "task-001"
	api := fakeapi.New(t,
		fakeapi.Bash(`harness edit `+id+` --validate "test -f alpha.txt"`),
		fakeapi.Bash("harness claim "+id),
		fakeapi.Write(p.path("alpha.txt"), "alpha\n"),
		fakeapi.Bash("harness validate "+id),
		fakeapi.Text("Done."),
	)
	res := p.run(api, "Work on the tasks.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	if first := api.Request(0); !first.Contains("a validation command first, `harness edit " + id + ` --validate "COMMAND"` + "`") {
		t.Errorf("the start does not say to give %s a check first:\n%s", id, clip(first.NewText()))
	}
	for _, cmd := range []string{"harness edit", "harness claim", "harness validate"} {
		if trs := toolResultsOf(api, cmd); len(trs) != 1 || trs[0].IsError {
			t.Errorf("`%s` failed: %+v", cmd, trs)
		}
	}
	if tk := p.task(id); tk.Status != "completed" {
		t.Errorf("%s is %q, want completed", id, tk.Status)
	}
}

// TestScenarioLock: a live process holds the session lock (written the way
// the seed's shell snippet writes it). A session started meanwhile is told,
// and its mutating calls are denied while read-only ones run. Once the
// holder is dead, the next session reclaims the lock with a WARN.
func TestScenarioLock(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	id := p.add("Write the file", "--validate", "test -f task-001.txt")

	holder := exec.Command("sleep", "300")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	holderDone := make(chan struct{})
	go func() { holder.Wait(); close(holderDone) }()
	t.Cleanup(func() { holder.Process.Kill(); <-holderDone })
	pid := strconv.Itoa(holder.Process.Pid)
	lockDir := p.lockPath()
	if err := os.Mkdir(lockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(lockDir, "pid"), []byte(pid+"\n"), 0o644)

	// While the holder lives.
	api := fakeapi.New(t,
		fakeapi.Bash("harness claim "+id),
		fakeapi.Bash("harness checkpoint "+id+` --step 1/2 "sneaking in"`),
		fakeapi.Bash("harness status"),
		fakeapi.Write(p.path("notes.txt"), "a note\n"),
		fakeapi.Text("Another session owns this project; stopping."),
	)
	res := p.run(api, "Work on the tasks.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	if first := api.Request(0); !first.Contains(sessionStartText) || !first.Contains("pid="+pid) {
		t.Errorf("first request does not tell the model that pid %s holds the session lock:\n%s", pid, clip(first.NewText()))
	}
	// Mutations of the harness state are denied before they run, naming
	// the holder.
	for _, verb := range []string{"harness claim", "harness checkpoint"} {
		if trs, ok := refusedBefore(api, verb, "Bash", "PreToolUse:Bash hook error:", "pid="+pid); !ok {
			t.Errorf("`%s` while pid %s holds the session lock was not denied naming the holder: %+v", verb, pid, trs)
		}
	}
	if tk := p.task(id); tk.Status != "pending" {
		t.Errorf("%s is %q, want pending: the locked-out session changed the state", id, tk.Status)
	}
	// Reading is fine.
	if trs := toolResultsOf(api, "harness status"); len(trs) != 1 || trs[0].IsError {
		t.Errorf("read-only `harness status` was refused: %+v", trs)
	}
	// Project files are not the harness's to refuse (the session may be
	// doing unrelated work), but the model is reminded with the result.
	if trs := toolResultsOf(api, "notes.txt"); len(trs) != 1 {
		t.Errorf("Write: want one tool result, got %+v", trs)
	} else if r := afterToolResult(api, trs[0].ToolUseID); r == nil || !r.LastUserContains("pid="+pid) {
		t.Errorf("the Write's result came without a reminder that pid %s owns the harness", pid)
	}
	if fb := stopFeedbacks(api); len(fb) > 0 {
		t.Errorf("the Stop hook pushed a locked-out session to work on another session's tasks:\n%s", fb[0])
	}
	if got := readOr(filepath.Join(lockDir, "pid"), ""); strings.TrimSpace(got) != pid {
		t.Errorf("session lock now holds %q, want the live holder %s", got, pid)
	}

	// The holder dies: the next session reclaims the lock.
	holder.Process.Kill()
	<-holderDone
	logBefore := p.progressLog()
	api2 := fakeapi.New(t, honestly(p, id, "task-001.txt")...)
	res2 := p.run(api2, "Work on the tasks.")
	if res2.ExitCode != 0 {
		t.Fatalf("second session failed: %v", res2)
	}
	added := newLines(logBefore, p.progressLog())
	if !regexp.MustCompile(`(?m)\] WARN .*\b` + pid + `\b`).MatchString(added) {
		t.Errorf("no WARN line naming the stale holder pid %s; the session appended:\n%s", pid, added)
	}
	for _, verb := range []string{"harness claim", "harness validate"} {
		if trs := toolResultsOf(api2, verb); len(trs) != 1 || trs[0].IsError {
			t.Errorf("`%s` after reclaiming the lock: %+v", verb, trs)
		}
	}
	if tk := p.task(id); tk.Status != "completed" {
		t.Errorf("%s is %q after the reclaiming session, want completed", id, tk.Status)
	}
	if _, err := os.Stat(lockDir); err == nil {
		t.Errorf("session lock %s still held after the session ended (holder %q)", lockDir, readOr(filepath.Join(lockDir, "pid"), "?"))
	}
}

// TestScenarioValve: a model that keeps saying it is done without doing
// anything is let go by the harness's safety valve, with a WARN, before
// Claude Code's own cap of 8 consecutive blocks (which would end the turn
// with an empty result).
func TestScenarioValve(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	id := p.add("Never done", "--validate", "test -f never.txt")
	logBefore := p.progressLog()

	api := fakeapi.New(t, fakeapi.Loop(func(r *fakeapi.Request) (fakeapi.Turn, bool) {
		return fakeapi.Text("I am done."), false
	}))
	res := p.run(api, "Work on the tasks.")
	if res.ExitCode != 0 || res.Result != "I am done." {
		t.Fatalf("want the session released with the model's last text (an empty result means Claude Code's own 8-block cap ended it), got %v", res)
	}
	fb := stopFeedbacks(api)
	if len(fb) == 0 || len(fb) > 5 {
		t.Errorf("the Stop hook blocked %d times, want 1 to 5 before the valve opens", len(fb))
	}
	if strings.Contains(res.Stdout+res.Stderr, "consecutive times") {
		t.Errorf("Claude Code's own Stop-block cap ended the turn, not the harness valve:\n%v", res)
	}
	added := newLines(logBefore, p.progressLog())
	if !regexp.MustCompile(`(?m)\] WARN `).MatchString(added) {
		t.Errorf("the valve opened without a WARN line; the session appended:\n%s", added)
	}
	if tk := p.task(id); tk.Status != "pending" {
		t.Errorf("%s is %q, want pending: the valve releases the session, it does not decide the task", id, tk.Status)
	}
}

// TestScenarioReflection: after the last task, the Stop hook asks for
// max_reflect_iterations rounds of self-reflection, numbered i/N, and then
// lets the session stop.
func TestScenarioReflection(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	p.setConfig("max_reflect_iterations", "2")
	id := p.add("Write the file", "--validate", "test -f task-001.txt")

	w := newWorker(p.Dir)
	api := fakeapi.New(t, w.Turn())
	res := p.run(api, "Work on the tasks.")
	if res.ExitCode != 0 || res.Result != "Reflected: the work holds up." {
		t.Fatalf("want a clean stop after the last reflection round, got %v", res)
	}
	if tk := p.task(id); tk.Status != "completed" {
		t.Fatalf("%s is %q, want completed", id, tk.Status)
	}
	var rounds []string
	round := regexp.MustCompile(`Self-reflect (\d+)/(\d+)`)
	fb := stopFeedbacks(api)
	for _, f := range fb {
		if m := round.FindString(f); m != "" {
			rounds = append(rounds, m)
		}
	}
	if want := []string{"Self-reflect 1/2", "Self-reflect 2/2"}; !slices.Equal(rounds, want) {
		t.Errorf("reflection rounds %q, want %q; feedbacks:\n%s", rounds, want, strings.Join(fb, "\n---\n"))
	}
	if len(fb) > 0 && !round.MatchString(fb[len(fb)-1]) {
		t.Errorf("the last Stop feedback is not a reflection round: the session did not stop right after them:\n%s", fb[len(fb)-1])
	}
	if p.exists(".harness-active") {
		t.Errorf(".harness-active still present after the run finished")
	}
}

// TestScenarioSkill: the skill the installer puts in ~/.claude/skills is
// offered to the model, and `/harness status` expands its body with the
// argument substituted.
func TestScenarioSkill(t *testing.T) {
	t.Parallel()
	p := newInstalledProject(t)
	skill := filepath.Join(p.Home, ".claude", "skills", "harness", "SKILL.md")
	data, err := os.ReadFile(skill)
	if err != nil {
		t.Fatalf("the installer did not install the skill as %s: %v", skill, err)
	}
	desc, body := splitSkill(string(data))
	if desc == "" || body == "" {
		t.Fatalf("%s: want frontmatter with a description and a body", skill)
	}

	// Work is pending: a status request still ends with its answer (the
	// Stop hook does not push a status turn into the work loop).
	p.initState()
	p.add("Pending work", "--validate", "test -f done.txt")

	api := fakeapi.New(t, fakeapi.Text("Status shown."))
	res := p.run(api, "/harness status")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	if n := len(api.MainRequests()); n != 1 {
		t.Errorf("the status turn took %d model requests, want 1 (the Stop hook pushed it into work?)", n)
	}
	if !strings.Contains(res.Result, "Status shown.") {
		t.Errorf("the session did not end with the status answer: %q", res.Result)
	}
	first := api.Request(0)
	listing := "- harness: " + clipRunes(desc, 60)
	if !first.Contains(listing) {
		t.Errorf("the skill is not listed to the model as %q:\n%s", listing, clip(first.NewText()))
	}
	expanded := substituteSkill(body, "status", filepath.Dir(skill), p.Dir)
	for _, line := range distinctiveLines(expanded, 3) {
		if !first.Contains(line) {
			t.Errorf("`/harness status` did not bring the skill body to the model: missing line %q", line)
		}
	}
	if strings.Contains(body, "$ARGUMENTS") {
		if strings.Contains(first.Text(), "$ARGUMENTS") {
			t.Errorf("$ARGUMENTS reached the model unsubstituted")
		}
	} else if !first.Contains("ARGUMENTS: status") {
		t.Errorf("the argument did not reach the model (no $ARGUMENTS in the body, and no \"ARGUMENTS: status\" line)")
	}
}

// splitSkill returns a SKILL.md's description and body.
func splitSkill(s string) (desc, body string) {
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return "", s
	}
	front, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		return "", s
	}
	for _, line := range strings.Split(front, "\n") {
		if v, ok := strings.CutPrefix(line, "description:"); ok {
			desc = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return desc, strings.TrimSpace(body)
}

// substituteSkill applies the substitutions Claude Code makes when a skill
// is invoked with one argument.
func substituteSkill(body, arg, skillDir, projectDir string) string {
	return strings.NewReplacer(
		"$ARGUMENTS", arg, "$0", arg,
		"${CLAUDE_SKILL_DIR}", skillDir,
		"${CLAUDE_PROJECT_DIR}", projectDir,
	).Replace(body)
}

// distinctiveLines picks up to n non-trivial lines of s free of unresolved
// variables, preferring ones that held an argument.
func distinctiveLines(s string, n int) []string {
	var withArg, other []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if len(line) < 20 || strings.Contains(line, "$") {
			continue
		}
		if strings.Contains(line, "status") {
			withArg = append(withArg, line)
		} else {
			other = append(other, line)
		}
	}
	out := append(withArg, other...)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		r = r[:n]
	}
	return string(r)
}

// completeEveryTask is a script that marks every task completed in the
// tasks file: what the guard cannot read, and the check after the call
// catches.
const completeEveryTask = `import json
d = json.load(open("harness-tasks.json"))
for t in d["tasks"]:
    t["status"] = "completed"
json.dump(d, open("harness-tasks.json", "w"), indent=2)
`

// TestScenarioTamperScript: what the guard cannot read, the check after the
// tool call catches. The model writes a Python script that marks its task
// completed and runs it; the PostToolUse hook puts the tasks file back
// before the model's next step and tells it so in that tool's result; the
// task completes only through `harness validate`.
func TestScenarioTamperScript(t *testing.T) {
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
		fakeapi.Bash("python3 mark.py"),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			mu.Lock()
			defer mu.Unlock()
			afterScript = readOr(tasksFile, "")
			notice = r.LastUserContains("HARNESS TAMPER") && r.LastUserContains("harness-tasks.json was changed")
			if !notice || testing.Verbose() {
				t.Logf("the request after the script:\n%s", clip(r.NewText()))
			}
			return fakeapi.Bash("echo alpha > alpha.txt && harness validate " + id)
		}),
		fakeapi.Text("Done."),
	)
	res := p.run(api, "Finish the task.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
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
	log := p.progressLog()
	for _, want := range []string{"TAMPER harness-tasks.json was changed (" + id + " cannot be completed: its validation `test -f alpha.txt` fails (exit 1)) by Bash `python3 mark.py`", "Completed [" + id + "]"} {
		if !strings.Contains(log, want) {
			t.Errorf("harness-progress.txt lacks %q:\n%s", want, log)
		}
	}
}

// TestScenarioTamperLockHeld: the model starts a background script that
// holds the harness's transaction lock (an flock needs only a file it can
// open) and completes the task in the tasks file. The check after the call
// waits for the lock a little, then judges without it: the completion is
// put back and the model told, within the hook's time limit; the turn end
// still blocks while the task fails. Before, every check gave up after
// 30 s (Claude Code's limit on PostToolUse), the forged completion stayed
// and the Stop hook finished the run on it.
func TestScenarioTamperLockHeld(t *testing.T) {
	t.Parallel()
	lockHeldForgery(t, newProject(t), true)
}

// lockHeldForgery is TestScenarioTamperLockHeld in the project p (the
// sandboxed level's: TestScenarioSandboxTamperLockHeld). outlives says
// whether the script's background process outlives its Bash call, still
// holding the lock when the check after the call runs.
func lockHeldForgery(t *testing.T, p *project, outlives bool) {
	p.initState()
	id := p.add("Write alpha", "--validate", "test -f alpha.txt")
	forge := `import fcntl, glob, json, os, time
f = open(glob.glob(os.path.join(os.environ["HARNESS_LOCK_DIR"], "*.tx"))[0])
fcntl.flock(f, fcntl.LOCK_EX)
d = json.load(open("harness-tasks.json"))
for t in d["tasks"]:
    t["status"] = "completed"
json.dump(d, open("harness-tasks.json", "w"), indent=2)
open("held", "w").write(str(os.getpid()))
time.sleep(90)
`
	var (
		mu     sync.Mutex
		notice bool // the request after the script carried the notice
	)
	api := fakeapi.New(t,
		fakeapi.Write(p.path("forge.py"), forge),
		fakeapi.Bash("(python3 forge.py >/dev/null 2>&1 &) ; for i in $(seq 100); do [ -f held ] && break; sleep 0.05; done; ls held"),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			mu.Lock()
			defer mu.Unlock()
			notice = r.LastUserContains("HARNESS TAMPER") && r.LastUserContains("harness-tasks.json was changed")
			if !notice || testing.Verbose() {
				t.Logf("the request after the script:\n%s", clip(r.NewText()))
			}
			return fakeapi.Text("All done.")
		}),
		fakeapi.Text("Done."),
	)
	t.Cleanup(func() {
		if pid, err := strconv.Atoi(readOr(p.path("held"), "")); err == nil {
			if proc, err := os.FindProcess(pid); err == nil {
				proc.Kill()
			}
		}
	})
	res := p.run(api, "Finish the task.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if !notice {
		t.Errorf("the model was not told of the revert in the request after the script")
	}
	if tk := p.task(id); tk.Status != "pending" {
		t.Errorf("%s is %q, want pending: the forged completion stayed", id, tk.Status)
	}
	if len(stopFeedbacks(api)) == 0 {
		t.Errorf("the Stop hook never blocked the \"all done\"")
	}
	if !p.exists(".harness-active") {
		t.Errorf("the run was finished (the harness switched off) on the forged state")
	}
	log := p.progressLog()
	if want := "TAMPER harness-tasks.json was changed (" + id + " cannot be completed"; !strings.Contains(log, want) {
		t.Errorf("harness-progress.txt lacks %q:\n%s", want, log)
	}
	if unlocked := strings.Contains(log, "judged without the transaction lock"); unlocked != outlives {
		t.Errorf("the check judged without the lock: %v, want %v (the holder outlives its call: %v):\n%s", unlocked, outlives, outlives, log)
	}
}

// TestScenarioHeartbeatFIFO: the model puts a FIFO, an hour old, in the
// place of PreToolUse's heartbeat mark in the runtime directory, then
// writes the tasks file. The hook makes the mark again, a file of its own,
// and denies the write at once. Before, its write open of the FIFO waited
// until Claude Code killed it at its 30 s limit, and a PreToolUse killed
// lets its tool call through: the guard was off.
func TestScenarioHeartbeatFIFO(t *testing.T) {
	t.Parallel()
	heartbeatFIFO(t, newProject(t))
}

// heartbeatFIFO is TestScenarioHeartbeatFIFO in the project p (the
// sandboxed level's: TestScenarioSandboxHeartbeatFIFO).
func heartbeatFIFO(t *testing.T, p *project) {
	t.Helper()
	p.initState()
	id := p.add("Write alpha", "--validate", "test -f alpha.txt")
	tasksFile := p.path("harness-tasks.json")
	api := fakeapi.New(t,
		fakeapi.Bash(`for f in .harness-runtime/heartbeat-*; do rm "$f" && mkfifo "$f" && touch -d '1 hour ago' "$f"; done; ls -l .harness-runtime`),
		fakeapi.Write(tasksFile, `{"version": 2, "tasks": []}`),
		fakeapi.Text("Done."),
	)
	res := p.run(api, "Clear the task list.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	// The FIFO was made (in the sandbox too: the runtime directory is the
	// agent's to write), else the scenario shows nothing.
	if made := toolResultsOf(api, "mkfifo"); len(made) != 1 || made[0].IsError ||
		!regexp.MustCompile(`(?m)^p\S* .* heartbeat-`).MatchString(made[0].Text) {
		t.Fatalf("no FIFO in the heartbeat's place: %+v", made)
	}
	if trs, ok := refusedBefore(api, `"tasks": []`, "Write", "harness [state-files]"); !ok {
		t.Errorf("the Write of the tasks file was not denied by the guard: %+v", trs)
	}
	if tk := p.task(id); tk.Status != "pending" {
		t.Errorf("%s is %q, want pending: the write went through", id, tk.Status)
	}
	marks, _ := filepath.Glob(p.path(".harness-runtime/heartbeat-*"))
	for _, m := range marks {
		if fi, err := os.Lstat(m); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s is not a file of its own after the hook: %v", m, fi.Mode())
		}
	}
	if len(marks) == 0 {
		t.Errorf("no heartbeat mark: the scenario did not reach it")
	}
}
