package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
	"github.com/harness-agent/harness/internal/testbin"
)

// This file is the shared set-up of the harness scenarios (scenario_test.go):
// the harness executables built once per test binary, a project that is a
// real git repository with a baseline commit, a private HOME whose
// settings.json registers the hooks the way a user's would, state seeded
// through the real `harness init` / `harness add`, and a scripted model that
// works the way the hooks tell it to.

// TestMain removes the executables built for the scenarios.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(filepath.Dir(binDir))
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// harnessBin builds every harness executable once per test binary run, with
// the project's own build script, and returns the directory holding them.
// The CLI is required first: without it the scenarios skip (or fail, in CI)
// before paying for the build.
func harnessBin(t testing.TB) string {
	t.Helper()
	RequireClaude(t)
	buildOnce.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		tmp, err := os.MkdirTemp("", "harness-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = filepath.Join(tmp, "bin")
		cmd := exec.Command(filepath.Join(root, "scripts", "build.sh"), binDir)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("scripts/build.sh: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building the harness executables: %v", buildErr)
	}
	return binDir
}

// project is one scenario's world: a git repository holding the state files,
// the HOME of the Claude Code runs, a private lock directory, and the hook
// configuration a user would have after installing the harness.
type project struct {
	t *testing.T
	// Dir is the project (the git work tree and state root), symlinks
	// resolved, as the hooks see it.
	Dir string
	// Home is the HOME of every run, with the hooks registered in
	// Home/.claude/settings.json.
	Home string
	// Bin holds the harness executables; it is on the PATH of every run,
	// so the model's Bash tool can call `harness`.
	Bin string
	// LockDir is HARNESS_LOCK_DIR for the runs and the harness commands, so
	// scenarios never touch /tmp/harness-*.lock or one another.
	LockDir string
	// HookLog is HARNESS_HOOK_LOG: one JSON line per hook invocation,
	// logged when the test fails.
	HookLog string
}

// newProject creates a git repository with a baseline commit, a HOME with
// the hooks registered by `harness hooks install`, and a lock directory.
func newProject(t *testing.T) *project { t.Helper(); return setupProject(t, installHooks) }

// newInstalledProject is newProject with everything installed by install.sh
// (executables, skill, hooks), as a user would.
func newInstalledProject(t *testing.T) *project {
	t.Helper()
	return setupProject(t, runInstallScript)
}

func setupProject(t *testing.T, install func(*testing.T, *project)) *project {
	t.Helper()
	return setupProjectIn(t, t.TempDir, install)
}

// setupProjectIn is setupProject with the project, its home and its lock
// directory made by mkdir.
func setupProjectIn(t *testing.T, mkdir func() string, install func(*testing.T, *project)) *project {
	t.Helper()
	bin := harnessBin(t)
	dir, err := filepath.EvalSymlinks(mkdir())
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	p := &project{
		t:       t,
		Dir:     dir,
		Home:    mkdir(),
		Bin:     bin,
		LockDir: mkdir(),
		HookLog: filepath.Join(scratch, "hooks.jsonl"),
	}
	p.git("init", "-q", "-b", "main")
	// HOME is private, so git's identity must live in the repository for
	// the commits `harness validate` makes.
	p.git("config", "user.email", "e2e@harness.test")
	p.git("config", "user.name", "harness e2e")
	p.git("config", "commit.gpgsign", "false")
	p.writeFile("README.md", "# e2e project\n")
	p.git("add", "README.md")
	p.git("commit", "-q", "-m", "baseline")
	install(t, p)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("hook invocations (%s):\n%s", p.HookLog, readOr(p.HookLog, "(none)"))
			t.Logf("harness-progress.txt:\n%s", readOr(p.path("harness-progress.txt"), "(none)"))
			t.Logf("harness-tasks.json:\n%s", readOr(p.path("harness-tasks.json"), "(none)"))
		}
	})
	return p
}

// outsideTmp returns a maker of directories outside /tmp, removed when the
// test ends: Claude Code's sandbox lets every command write all of /tmp,
// so a scenario whose project, home or trees sit there (t.TempDir) cannot
// show where the sandbox stops. $HARNESS_E2E_OUTSIDE_TMP names the parent,
// /var/tmp by default.
func outsideTmp(t *testing.T) func() string {
	base := os.Getenv("HARNESS_E2E_OUTSIDE_TMP")
	if base == "" {
		base = "/var/tmp"
	}
	return func() string {
		t.Helper()
		d, err := os.MkdirTemp(base, "harness-e2e-*")
		if err != nil {
			t.Fatalf("a directory outside /tmp: %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			t.Fatal(err)
		}
		return real
	}
}

// installHooks registers the harness hooks in p.Home/.claude/settings.json
// with the project's own installer verb, exactly as install.sh does it.
func installHooks(t *testing.T, p *project) {
	t.Helper()
	settings := filepath.Join(p.Home, ".claude", "settings.json")
	p.harness("hooks", "install", "--settings", settings, "--bin-dir", p.Bin)
}

// runInstallScript runs the repository's install.sh the way a user does,
// with p.Home as HOME: it builds the harness, installs the executables in
// ~/.claude/harness/bin, the skill in ~/.claude/skills/harness and the hooks
// in ~/.claude/settings.json. p.Bin then points at the installed
// executables. The Go caches stay the developer's, so the build is
// incremental.
func runInstallScript(t *testing.T, p *project) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "install.sh"))
	cmd.Dir = root
	cmd.Env = append(baseEnv(), "HOME="+p.Home)
	cmd.Env = append(cmd.Env, goCaches(t)...)
	out, err := testbin.AsPerson(cmd).CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	p.Bin = filepath.Join(p.Home, ".claude", "harness", "bin")
}

var (
	goCacheOnce sync.Once
	goCacheEnv  []string
)

// goCaches pins GOCACHE, GOMODCACHE and GOPATH to the developer's, which
// would otherwise move with HOME (a cold cache is a full rebuild).
func goCaches(t *testing.T) []string {
	goCacheOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
		if err != nil {
			return
		}
		vals := strings.Split(strings.TrimSpace(string(out)), "\n")
		for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
			if i < len(vals) && vals[i] != "" {
				goCacheEnv = append(goCacheEnv, k+"="+vals[i])
			}
		}
	})
	return goCacheEnv
}

// env is the environment of the Claude Code runs (added to what e2e.Run
// sets) and of the harness commands the test runs itself.
func (p *project) env() []string {
	return []string{
		"PATH=" + p.Bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HARNESS_LOCK_DIR=" + p.LockDir,
		"HARNESS_HOOK_LOG=" + p.HookLog,
		// An outer harness session must not leak into the scenario.
		"HARNESS_STATE_ROOT=",
		"HARNESS_WORKER_ID=",
	}
}

// harnessEnv is the environment of a harness command run by the test: a
// fresh user's (no outer Claude Code session variables) plus the scenario's.
func harnessEnv(bin, lockDir, hookLog string) []string {
	env := baseEnv()
	env = append(env,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HARNESS_STATE_ROOT=", "HARNESS_WORKER_ID=")
	if lockDir != "" {
		env = append(env, "HARNESS_LOCK_DIR="+lockDir)
	}
	if hookLog != "" {
		env = append(env, "HARNESS_HOOK_LOG="+hookLog)
	}
	return env
}

// refusedBefore reports whether the one tool call whose input contains
// needle was refused by the PreToolUse hook before it ran (its result
// "PreToolUse:TOOL hook error …"), the result saying each of says; the
// results come back for the failure's message.
func refusedBefore(api *fakeapi.Server, needle, tool string, says ...string) ([]fakeapi.ToolResult, bool) {
	trs := toolResultsOf(api, needle)
	if len(trs) != 1 || !trs[0].IsError || !strings.Contains(trs[0].Text, "PreToolUse:"+tool+" hook error") {
		return trs, false
	}
	for _, want := range says {
		if !strings.Contains(trs[0].Text, want) {
			return trs, false
		}
	}
	return trs, true
}

// harnessIn runs the harness command in dir and returns its combined output
// and exit code.
func (p *project) harnessIn(dir string, args ...string) (string, int) {
	p.t.Helper()
	cmd := exec.Command(filepath.Join(p.Bin, "harness"), args...)
	cmd.Dir = dir
	cmd.Env = append(harnessEnv(p.Bin, p.LockDir, ""), "HOME="+p.Home)
	if len(args) > 0 && testbin.PersonVerbs[args[0]] {
		cmd = testbin.AsPerson(cmd)
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	p.t.Fatalf("running harness %v: %v", args, err)
	return "", -1
}

// harness runs a harness verb in the project and fails the test unless it
// succeeds; it returns the trimmed output.
func (p *project) harness(args ...string) string {
	p.t.Helper()
	out, code := p.harnessIn(p.Dir, args...)
	if code != 0 {
		p.t.Fatalf("harness %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return strings.TrimSpace(out)
}

// initState runs `harness init` (state files, .git/info/exclude,
// .harness-active) in the project.
func (p *project) initState() {
	p.t.Helper()
	p.harness("init")
}

// add runs `harness add TITLE flags…` and returns the new task id.
func (p *project) add(title string, flags ...string) string {
	p.t.Helper()
	return p.harness(append([]string{"add", title}, flags...)...)
}

// setConfig sets session_config.key in harness-tasks.json to the JSON value
// raw. The harness has no verb for session settings: a user edits the file
// before a session, as this does.
func (p *project) setConfig(key, raw string) {
	p.t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(p.readFile("harness-tasks.json")), &doc); err != nil {
		p.t.Fatal(err)
	}
	cfg, _ := doc["session_config"].(map[string]any)
	if cfg == nil {
		cfg = map[string]any{}
		doc["session_config"] = cfg
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		p.t.Fatal(err)
	}
	cfg[key] = v
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		p.t.Fatal(err)
	}
	p.writeFile("harness-tasks.json", string(data)+"\n")
	// A person's hand edit: kept, as a person keeps theirs.
	p.harness("adopt", "--yes")
}

// run runs one Claude Code session in the project against api.
func (p *project) run(api *fakeapi.Server, prompt string, extraEnv ...string) *Result {
	p.t.Helper()
	return Run(p.t, Options{
		Prompt:     prompt,
		API:        api,
		ProjectDir: p.Dir,
		Home:       p.Home,
		Env:        append(p.env(), extraEnv...),
	})
}

// git runs git in the project and returns its trimmed output.
func (p *project) git(args ...string) string {
	p.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = p.Dir
	cmd.Env = append(baseEnv(), "HOME="+p.Home, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (p *project) path(name string) string { return filepath.Join(p.Dir, name) }

func (p *project) writeFile(name, content string) {
	p.t.Helper()
	writeFile(p.t, p.path(name), []byte(content), 0o644)
}

func (p *project) readFile(name string) string {
	p.t.Helper()
	data, err := os.ReadFile(p.path(name))
	if err != nil {
		p.t.Fatal(err)
	}
	return string(data)
}

func (p *project) exists(name string) bool {
	_, err := os.Stat(p.path(name))
	return err == nil
}

// progressLog is harness-progress.txt ("" when missing).
func (p *project) progressLog() string { return readOr(p.path("harness-progress.txt"), "") }

// task is the subset of a task the scenarios assert on.
type task struct {
	ID          string   `json:"id"`
	Status      string   `json:"status"`
	Attempts    int      `json:"attempts"`
	MaxAttempts int      `json:"max_attempts"`
	ErrorLog    []string `json:"error_log"`
	Checkpoints []any    `json:"checkpoints"`
	CompletedAt *string  `json:"completed_at"`
	Source      string   `json:"source"`
}

// tasks parses harness-tasks.json.
func (p *project) tasks() map[string]task {
	p.t.Helper()
	var doc struct {
		Tasks []task `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(p.readFile("harness-tasks.json")), &doc); err != nil {
		p.t.Fatalf("harness-tasks.json: %v", err)
	}
	out := map[string]task{}
	for _, t := range doc.Tasks {
		out[t.ID] = t
	}
	return out
}

// task returns one task, failing the test when it is missing.
func (p *project) task(id string) task {
	p.t.Helper()
	tk, ok := p.tasks()[id]
	if !ok {
		p.t.Fatalf("harness-tasks.json has no task %s", id)
	}
	return tk
}

// lockPath is the session lock directory of the project as the seed's shell
// snippet computes it: harness-<first 16 hex of sha256(root)>.lock, here in
// LockDir instead of /tmp. Computed independently of package lock, so a
// scenario also checks the byte compatibility with the snippet.
func (p *project) lockPath() string {
	sum := sha256.Sum256([]byte(p.Dir))
	return filepath.Join(p.LockDir, "harness-"+hex.EncodeToString(sum[:])[:16]+".lock")
}

// listDir lists the names under dir, recursively, sorted ("" entries for
// nothing).
func listDir(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && path != dir {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func readOr(path, missing string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return missing
	}
	return string(data)
}

// newLines returns the lines of after that follow the prefix before: what a
// session appended to an append-only log.
func newLines(before, after string) string {
	if !strings.HasPrefix(after, before) {
		return after // rewritten, not appended: show everything
	}
	return after[len(before):]
}

// Texts the real CLI 2.1.330 uses around hook output (see smoke_test.go and
// CLAUDE_CODE_FACTS.md).
const (
	stopFeedback     = "Stop hook feedback:"
	sessionStartText = "SessionStart hook additional context:"
)

// stopFeedbacks returns the Stop hook feedback texts the CLI sent to the
// model, in order: the new text of every main request carrying one.
func stopFeedbacks(api *fakeapi.Server) []string {
	var out []string
	for _, r := range api.MainRequests() {
		if nt := r.NewText(); strings.Contains(nt, stopFeedback) {
			out = append(out, nt[strings.Index(nt, stopFeedback):])
		}
	}
	return out
}

// harnessCmd finds the harness verb a hook told the model to run next.
var harnessCmd = regexp.MustCompile(`harness (claim|validate|recover) (task-[0-9]+)`)

// worker is a scripted model that does what the Stop hook tells it and
// nothing more: it claims the task the feedback names, writes the file the
// task's validation checks (<id>.txt), validates it, and then says it is
// done, whether or not it is. Self-reflection feedback is answered with a
// short text. It never reads SessionStart context, so every task it works
// on was named by the Stop hook.
type worker struct {
	dir      string
	doneText string

	mu      sync.Mutex
	pending []fakeapi.Turn // the rest of the current task's steps
	claimed []string       // ids it claimed, in order
}

func newWorker(dir string) *worker {
	return &worker{dir: dir, doneText: "All tasks are done."}
}

// Turn is the worker as a script: a Loop that answers every main request.
func (w *worker) Turn() fakeapi.Turn {
	return fakeapi.Loop(func(r *fakeapi.Request) (fakeapi.Turn, bool) { return w.next(r), false })
}

func (w *worker) next(r *fakeapi.Request) fakeapi.Turn {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) > 0 {
		t := w.pending[0]
		w.pending = w.pending[1:]
		return t
	}
	nt := r.NewText()
	if !strings.Contains(nt, stopFeedback) {
		return fakeapi.Text(w.doneText)
	}
	if strings.Contains(nt, "Self-reflect") {
		return fakeapi.Text("Reflected: the work holds up.")
	}
	m := harnessCmd.FindStringSubmatch(nt)
	if m == nil {
		return fakeapi.Text(w.doneText)
	}
	verb, id := m[1], m[2]
	switch verb {
	case "claim":
		w.claimed = append(w.claimed, id)
		w.pending = []fakeapi.Turn{
			fakeapi.Write(filepath.Join(w.dir, id+".txt"), "work for "+id+"\n"),
			fakeapi.Bash("harness validate " + id),
		}
		return fakeapi.Bash("harness claim " + id)
	default:
		return fakeapi.Bash("harness " + verb + " " + id)
	}
}

func (w *worker) Claimed() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.claimed...)
}

// inputContains reports whether a tool input holds needle in its raw JSON or
// in one of its string values (decoded, so quotes need no escaping).
func inputContains(input []byte, needle string) bool {
	if bytes.Contains(input, []byte(needle)) {
		return true
	}
	var m map[string]any
	json.Unmarshal(input, &m)
	for _, v := range m {
		if s, ok := v.(string); ok && strings.Contains(s, needle) {
			return true
		}
	}
	return false
}

// toolResultsOf returns, for every tool_use the model sent whose input
// contains needle, the tool_result the CLI answered it with.
func toolResultsOf(api *fakeapi.Server, needle string) []fakeapi.ToolResult {
	last := api.MainRequests()
	if len(last) == 0 {
		return nil
	}
	final := last[len(last)-1]
	ids := map[string]bool{}
	for _, m := range final.Messages() {
		if m.Role != "assistant" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "tool_use" && inputContains(b.Input, needle) {
				ids[b.ID] = true
			}
		}
	}
	var out []fakeapi.ToolResult
	for _, tr := range final.ToolResults() {
		if ids[tr.ToolUseID] {
			out = append(out, tr)
		}
	}
	return out
}

// clip shortens a request text for a failure message.
func clip(s string) string { return truncate(s, 3000) }

// afterToolResult returns the main request that carried the tool_result of
// toolUseID to the model, or nil.
func afterToolResult(api *fakeapi.Server, toolUseID string) *fakeapi.Request {
	for _, r := range api.MainRequests() {
		for _, tr := range r.LastToolResults() {
			if tr.ToolUseID == toolUseID {
				return r
			}
		}
	}
	return nil
}
