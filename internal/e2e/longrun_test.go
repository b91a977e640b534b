package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/sjson"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
	"github.com/harness-agent/harness/internal/testbin"
)

// noRetries makes Claude Code give up on the first API error instead of
// retrying with backoff for minutes.
const noRetries = "CLAUDE_CODE_MAX_RETRIES=0"

// TestScenarioRateLimit: a turn that ends on a 429 leaves the task claimed,
// logged as API_ERROR [RATE_LIMIT] by the StopFailure hook, with the reset
// time the error gave; `harness resume --wait` waits for it and continues
// the same task in a new run of Claude Code, which completes it.
func TestScenarioRateLimit(t *testing.T) {
	t.Parallel()
	p := newInstalledProject(t)
	p.initState()
	id := p.add("Write the file", "--validate", "test -f limited.txt")

	api := fakeapi.New(t,
		fakeapi.Bash("harness claim "+id),
		fakeapi.APIError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit. Retry after 2 seconds.", map[string]string{"retry-after": "2"}),
	)
	first := p.run(api, "Work on the harness tasks.", noRetries)
	if tk := p.task(id); tk.Status != "in_progress" {
		t.Fatalf("%s is %q after the rate limit, want in_progress (claim kept); run: %v", id, tk.Status, first)
	}
	log := p.progressLog()
	if !regexp.MustCompile(`(?m)\] API_ERROR \[RATE_LIMIT\] turn ended on an API error.*claim kept, lease renewed: ` + id).MatchString(log) {
		t.Fatalf("no API_ERROR [RATE_LIMIT] line keeping the claim; log:\n%s", log)
	}
	t.Logf("StopFailure logged: %s", lastLineWith(log, "API_ERROR"))

	// The person (or a timer) continues the job.
	api.Append(
		fakeapi.Write(filepath.Join(p.Dir, "limited.txt"), "done\n"),
		fakeapi.Bash("harness validate "+id),
		fakeapi.Text("Done."),
	)
	claude := RequireClaude(t)
	cmd := exec.Command(filepath.Join(p.Bin, "harness"), "resume", "--wait", "--", "--dangerously-skip-permissions")
	cmd.Dir = p.Dir
	cmd.Env = append(runEnv(p, api), "HARNESS_CLAUDE="+claude, noRetries)
	out, err := testbin.AsPerson(cmd).CombinedOutput()
	if err != nil {
		t.Fatalf("harness resume --wait: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `claude --continue --dangerously-skip-permissions -p '/harness run'`) {
		t.Errorf("resume --wait did not say what it runs:\n%s", out)
	}
	if tk := p.task(id); tk.Status != "completed" {
		t.Errorf("%s is %q after harness resume --wait, want completed; output:\n%s\nrequests:\n%s", id, tk.Status, out, api.Summary())
	}
	if r := api.Find("/harness run"); r == nil {
		t.Errorf("the continued session never got the /harness run prompt")
	}
}

// TestScenarioRateLimitWithoutStopFailure: Claude Code does not wait for
// its StopFailure hooks, so a run that exits at once on an API error can end
// before the hook ran. Here it never runs (it is not registered): the
// session's end finds the error in the transcript and keeps the claim,
// logs API_ERROR and records the reset, as the hook would have.
func TestScenarioRateLimitWithoutStopFailure(t *testing.T) {
	t.Parallel()
	p := newInstalledProject(t)
	settings := filepath.Join(p.Home, ".claude", "settings.json")
	doc, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	doc, err = sjson.DeleteBytes(doc, "hooks.StopFailure")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	p.initState()
	id := p.add("Write the file", "--validate", "test -f limited.txt")

	api := fakeapi.New(t,
		fakeapi.Bash("harness claim "+id),
		fakeapi.APIError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit. Retry after 3600 seconds.", map[string]string{"retry-after": "3600"}),
	)
	run := p.run(api, "Work on the harness tasks.", noRetries)
	if hooks, _ := os.ReadFile(p.HookLog); strings.Contains(string(hooks), `"event":"StopFailure"`) {
		t.Fatalf("the StopFailure hook ran; this scenario is about a run without it")
	}
	if tk := p.task(id); tk.Status != "in_progress" {
		t.Fatalf("%s is %q after the rate limit, want in_progress (claim kept); run: %v", id, tk.Status, run)
	}
	log := p.progressLog()
	if !regexp.MustCompile(`(?m)\] API_ERROR \[RATE_LIMIT\] turn ended on an API error: API Error: Request rejected \(429\).*; the limit resets at \S+Z; claim kept, lease renewed: ` + id).MatchString(log) {
		t.Fatalf("SessionEnd did not record the API error; log:\n%s", log)
	}
	if n := strings.Count(log, "API_ERROR"); n != 1 {
		t.Errorf("%d API_ERROR lines, want 1; log:\n%s", n, log)
	}
	// What the person is told: the error, and when the job can go on.
	cmd := exec.Command(filepath.Join(p.Bin, "harness"), "resume")
	cmd.Dir = p.Dir
	cmd.Env = runEnv(p, api)
	out, _ := testbin.AsPerson(cmd).CombinedOutput()
	if !strings.Contains(string(out), "the last turn ended on an API error (rate_limit)") || !strings.Contains(string(out), "harness resume --wait") {
		t.Errorf("harness resume does not tell of the recorded error:\n%s", out)
	}
}

// runEnv is the environment a person's shell would give a command that
// starts Claude Code against the scripted API: the project's HOME, the
// harness on PATH, the fake server.
func runEnv(p *project, api *fakeapi.Server) []string {
	env := append(baseEnv(),
		"HOME="+p.Home,
		"ANTHROPIC_BASE_URL="+api.URL(),
		"ANTHROPIC_API_KEY=test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"IS_SANDBOX=1",
	)
	return append(env, p.env()...)
}

func lastLineWith(text, needle string) string {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], needle) {
			return lines[i]
		}
	}
	return ""
}

// TestScenarioPauseCompactResume: a person pauses the run; the paused
// session is let stop at once with its claim kept. The conversation is then
// compacted: the PreCompact hook writes a resume card naming the task and its
// last checkpoint, and the harness stays on. The person resumes; the next
// run's first request carries the card, and the model finishes the task.
func TestScenarioPauseCompactResume(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	id := p.add("Write the report", "--validate", "test -f report.txt")
	p.harness("claim", id)
	p.harness("checkpoint", id, "1/2", "outline drafted")
	p.harness("pause")

	api := fakeapi.New(t, fakeapi.Text("The run is paused; stopping."))
	paused := p.run(api, "Work on the harness tasks.")
	if paused.ExitCode != 0 || paused.Result != "The run is paused; stopping." {
		t.Fatalf("paused session: %v", paused)
	}
	if !api.Request(0).Contains("HARNESS PAUSED by the user") {
		t.Errorf("the paused session was not told so:\n%s", clip(api.Request(0).NewText()))
	}
	if fb := stopFeedbacks(api); len(fb) != 0 {
		t.Errorf("the Stop hook blocked a paused session: %q", fb)
	}

	compact := Run(t, Options{Prompt: "/compact", API: api, Home: p.Home, ProjectDir: p.Dir, Env: p.env(), Args: []string{"--continue"}})
	if compact.ExitCode != 0 {
		t.Fatalf("compact run: %v", compact)
	}
	card := p.readFile(".harness-runtime/resume-card.txt")
	for _, want := range []string{"task in progress: " + id + ": Write the report", `last checkpoint: step 1/2 "outline drafted"`, "trigger=manual"} {
		if !strings.Contains(card, want) {
			t.Errorf("resume card lacks %q:\n%s", want, card)
		}
	}
	if !regexp.MustCompile(`(?m)\] COMPACT compaction \(trigger=manual\); resume card: task in progress: ` + id).MatchString(p.progressLog()) {
		t.Errorf("no COMPACT line in the log:\n%s", p.progressLog())
	}
	if !p.exists(".harness-active") || p.task(id).Status != "in_progress" {
		t.Fatalf("compaction switched the harness off or lost the claim")
	}

	p.harness("resume")
	api.Append(
		fakeapi.Write(filepath.Join(p.Dir, "report.txt"), "report\n"),
		fakeapi.Bash("harness validate "+id),
		fakeapi.Text("Report done."),
	)
	before := len(api.MainRequests())
	res := Run(t, Options{Prompt: "go on", API: api, Home: p.Home, ProjectDir: p.Dir, Env: p.env(), Args: []string{"--continue"}})
	if res.ExitCode != 0 {
		t.Fatalf("resumed run: %v", res)
	}
	first := api.MainRequests()[before]
	for _, want := range []string{"HARNESS RESUME CARD", `outline drafted`, "continue from it"} {
		if !first.Contains(want) {
			t.Errorf("the resumed session's first request lacks %q:\n%s", want, clip(first.NewText()))
		}
	}
	if tk := p.task(id); tk.Status != "completed" {
		t.Errorf("%s is %q after the resumed session, want completed", id, tk.Status)
	}
}

// TestScenarioCancel: a cancelled run stays off. The session that follows
// gets no harness context and is never blocked, and nothing turns the hooks
// back on.
func TestScenarioCancel(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	id := p.add("Never started", "--validate", "false")
	p.harness("claim", id)
	out := p.harness("cancel")
	if !strings.Contains(out, "released "+id) {
		t.Errorf("cancel output: %s", out)
	}
	api := fakeapi.New(t, fakeapi.Bash("echo hello"), fakeapi.Text("Nothing to do."))
	res := p.run(api, "Work on the harness tasks.")
	if res.ExitCode != 0 || res.Result != "Nothing to do." {
		t.Fatalf("session after cancel: %v", res)
	}
	if api.Request(0).Contains(sessionStartText) {
		t.Errorf("a cancelled run still briefed the session")
	}
	if fb := stopFeedbacks(api); len(fb) != 0 {
		t.Errorf("the Stop hook blocked after cancel: %q", fb)
	}
	if p.exists(".harness-active") {
		t.Errorf(".harness-active is back after cancel")
	}
	if tk := p.task(id); tk.Status != "pending" {
		t.Errorf("%s is %q, want pending (released)", id, tk.Status)
	}
}

// TestScenarioTokenBudget: a job with max_job_tokens set ends its session
// at the turn end that finds the limit spent (the Stop hook would block
// otherwise: work remains), with a STOP budget line; the next session is
// told to start no work.
func TestScenarioTokenBudget(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.initState()
	id := p.add("Long job", "--validate", "test -f never.txt")
	p.harness("budget", "--max-job-tokens", "1000")

	api := fakeapi.New(t,
		fakeapi.Bash("harness claim "+id),
		fakeapi.Bash("echo working"),
		fakeapi.Loop(func(r *fakeapi.Request) (fakeapi.Turn, bool) {
			return fakeapi.Text("Stopping for now."), false
		}),
	)
	res := p.run(api, "Work on the harness tasks.")
	if res.ExitCode != 0 || res.Result != "Stopping for now." {
		t.Fatalf("session: %v", res)
	}
	log := p.progressLog()
	if !regexp.MustCompile(`(?m)\] STOP budget max_job_tokens=1000: \d+ used \(\d+%\)$`).MatchString(log) {
		t.Fatalf("no STOP budget line; log:\n%s", log)
	}
	// The transcript can lag one turn end behind the hook: at most one
	// block before the budget is seen spent, never the valve.
	if fb := stopFeedbacks(api); len(fb) > 1 {
		t.Errorf("the Stop hook blocked %d times before the budget stopped the session", len(fb))
	}
	if strings.Contains(log, "stop valve opened") {
		t.Errorf("the valve, not the budget, ended the session")
	}
	if tk := p.task(id); tk.Status != "in_progress" {
		t.Errorf("%s is %q, want in_progress (the claim is kept for when the budget is raised)", id, tk.Status)
	}

	api2 := fakeapi.New(t, fakeapi.Text("Budget spent, not working."))
	next := p.run(api2, "Work on the harness tasks.")
	if next.ExitCode != 0 {
		t.Fatalf("second session: %v", next)
	}
	if !api2.Request(0).Contains("Start no harness work") || !api2.Request(0).Contains("STOP budget max_job_tokens=1000") {
		t.Errorf("the next session was not told the budget is spent:\n%s", clip(api2.Request(0).NewText()))
	}
	if fb := stopFeedbacks(api2); len(fb) != 0 {
		t.Errorf("the Stop hook blocked a session whose budget is spent: %q", fb)
	}
	status := p.harness("status")
	if !regexp.MustCompile(`(?m)^budget: max_job_tokens=1000: \d+ used`).MatchString(status) {
		t.Errorf("harness status does not show the budget:\n%s", status)
	}
}
