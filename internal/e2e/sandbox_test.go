package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// The sandboxed level of trust under the real CLI: `harness install
// --sandbox` turns on Claude Code's own OS sandbox (bubblewrap on Linux) for
// every command the agent runs, with the record, the executables, the
// settings and the skill read-only inside it. These scenarios need
// bubblewrap and socat (Debian packages of those names; scripts/test.sh
// installs them in CI).

// requireSandbox skips the test when the sandbox's programs are missing,
// or fails it where the e2e suite is required (CI).
func requireSandbox(t *testing.T) {
	t.Helper()
	msg := ""
	for _, prog := range []string{"bwrap", "socat"} {
		if _, err := exec.LookPath(prog); err != nil && msg == "" {
			msg = prog + " not found: Claude Code's sandbox needs it on Linux (apt-get install bubblewrap socat)"
		}
	}
	if msg == "" {
		// bubblewrap needs user namespaces (or privileges): a container
		// without them cannot sandbox anything, and says so here.
		if out, err := exec.Command("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true").CombinedOutput(); err != nil {
			msg = fmt.Sprintf("bwrap cannot make a sandbox on this machine: %v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	if msg == "" {
		return
	}
	if os.Getenv("HARNESS_E2E_REQUIRED") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// newSandboxedProject is newProject with the harness installed by
// `harness install --sandbox`, as a user would: executables in
// ~/.claude/harness/bin, the skill, the hooks and the sandbox settings in
// ~/.claude/settings.json (the scenario's lock directory writable). The
// project, the home and the lock directory are outside /tmp, which the
// sandbox leaves writable to every command.
func newSandboxedProject(t *testing.T) *project {
	t.Helper()
	requireSandbox(t)
	return setupProjectIn(t, outsideTmp(t), func(t *testing.T, p *project) {
		t.Helper()
		p.harness("install", "--from", p.Bin, "--sandbox")
		p.Bin = filepath.Join(p.Home, ".claude", "harness", "bin")
	})
}

// recordDir is the project's record, where the harness keeps what it last
// wrote: $HOME/.local/state/harness/records/<first 16 hex of sha256(root)>.
func (p *project) recordDir() string {
	sum := sha256.Sum256([]byte(p.Dir))
	return filepath.Join(p.Home, ".local", "state", "harness", "records", hex.EncodeToString(sum[:8]))
}

// TestScenarioSandboxRecord: with the sandbox on, a command the agent runs
// cannot write the record (the shadow checkpoints in it included), the
// harness's executables or the user's settings, even from a script the guard cannot read: each write fails
// with "Read-only file system" and nothing changes; `harness status` says the level is sandboxed.
func TestScenarioSandboxRecord(t *testing.T) {
	t.Parallel()
	p := newSandboxedProject(t)
	p.initState()
	p.add("Write alpha", "--validate", "test -f alpha.txt")
	record := filepath.Join(p.recordDir(), "harness-tasks.json")
	if !strings.Contains(readOr(record, ""), `"task-001"`) {
		t.Fatalf("no record at %s", record)
	}
	settings := filepath.Join(p.Home, ".claude", "settings.json")
	settingsBefore := readOr(settings, "")
	// Written by a script, which the guard before the call cannot read:
	// only the sandbox stands in the way.
	// The shadow checkpoints live in the record too: the one taken before
	// the script runs is out of its reach.
	shadow := filepath.Join(p.recordDir(), "shadow")
	targets := []string{record, filepath.Join(filepath.Dir(p.recordDir()), "planted"),
		filepath.Join(p.Bin, "harness-stop"), settings, filepath.Join(shadow, "harness-head"), filepath.Join(shadow, "index")}
	script := "import sys\nfor p in sys.argv[1:]:\n    try:\n        open(p, 'w').write('{}')\n        print('WROTE', p)\n    except OSError as e:\n        print('REFUSED', p, e.strerror)\n"
	api := fakeapi.New(t,
		fakeapi.Write(p.path("try.py"), script),
		fakeapi.Bash("python3 try.py "+strings.Join(targets, " ")),
		fakeapi.Bash("harness status"),
		fakeapi.Text("Done."),
	)
	res := p.run(api, "Try the record.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	trs := toolResultsOf(api, "python3 try.py")
	if len(trs) != 1 {
		t.Fatalf("the script's result is missing: %+v", trs)
	}
	for _, target := range targets {
		if !strings.Contains(trs[0].Text, "REFUSED "+target+" Read-only file system") {
			t.Errorf("%s: want the write refused with Read-only file system:\n%s", target, trs[0].Text)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(p.recordDir()), "planted")); err == nil {
		t.Errorf("a file was planted in the record directory")
	}
	if got := readOr(settings, ""); got != settingsBefore {
		t.Errorf("the settings changed:\n%s", got)
	}
	if got := readOr(record, ""); got != p.readFile("harness-tasks.json") || !strings.Contains(got, `"task-001"`) {
		t.Errorf("the record is not the harness's own:\n%s", got)
	}
	if list := p.harness("undo", "--list"); !strings.Contains(list, "before Write: "+p.path("try.py")) || !strings.Contains(list, "before Bash: python3 try.py") {
		t.Errorf("the shadow checkpoints are not intact:\n%s", list)
	}
	if trs := toolResultsOf(api, "harness status"); len(trs) != 1 || !strings.Contains(trs[0].Text, "trust: sandboxed") {
		t.Errorf("harness status in the session does not say trust: sandboxed: %+v", trs)
	}
}

// TestScenarioSandboxEscape: a Bash call asking to run outside the sandbox
// (dangerouslyDisableSandbox: true) is refused by the harness's PreToolUse
// with its reason, and the command does not run.
func TestScenarioSandboxEscape(t *testing.T) {
	t.Parallel()
	p := newSandboxedProject(t)
	p.initState()
	p.add("Write alpha", "--validate", "test -f alpha.txt")
	escape := fakeapi.ToolUse("Bash", map[string]any{
		"command":                   "touch escaped.txt",
		"description":               "scripted escape",
		"dangerouslyDisableSandbox": true,
	})
	api := fakeapi.New(t, escape, fakeapi.Text("Done."))
	res := p.run(api, "Run it outside.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	if trs, ok := refusedBefore(api, "escaped.txt", "Bash", "harness [sandbox]", "dangerouslyDisableSandbox"); !ok {
		t.Errorf("the escape was not refused by the harness: %+v", trs)
	}
	if p.exists("escaped.txt") {
		t.Errorf("the refused command ran")
	}
}

// TestScenarioSandboxVerbs: the agent's own verbs work in the sandbox. They
// take the transaction lock in the lock directory (writable there) and
// write the project's tasks file; the record, read-only to them, is not
// updated, and the hook after the call (outside the sandbox) judges the
// change: adopted, or put back with the changed copy kept. Verbs chained
// in one command build on each other's writes (claim, checkpoint,
// validate to PASS) instead of putting back the record's copy.
func TestScenarioSandboxVerbs(t *testing.T) {
	t.Parallel()
	p := newSandboxedProject(t)
	p.initState()
	id := p.add("Write alpha", "--validate", "test -f alpha.txt")
	record := filepath.Join(p.recordDir(), "harness-tasks.json")
	var recordAfterClaim string
	api := fakeapi.New(t,
		fakeapi.Bash("harness claim "+id),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			recordAfterClaim = readOr(record, "")
			return fakeapi.Bash("harness checkpoint " + id + " 1/2 'half way'")
		}),
		// Whatever the hook made of the claim, the verbs run one after
		// another in one command: none of them takes the write of the one
		// before it (which the record lacks) for a tamper.
		fakeapi.Bash("{ harness status --json | grep -q '\"status\": \"in_progress\"' || harness claim "+id+"; } && harness checkpoint "+id+" 2/2 'again' && echo alpha > alpha.txt && harness validate "+id),
		fakeapi.Text("Done."),
	)
	recordBefore := readOr(record, "")
	res := p.run(api, "Work.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	claim := toolResultsOf(api, "harness claim")
	if len(claim) == 0 || claim[0].IsError || !strings.Contains(claim[0].Text, "Claimed "+id) {
		t.Fatalf("harness claim did not work in the sandbox: %+v", claim)
	}
	for _, verb := range []string{"harness claim", "harness checkpoint", "harness validate"} {
		for _, tr := range toolResultsOf(api, verb) {
			if strings.Contains(tr.Text, "read-only file system") || strings.Contains(tr.Text, "transaction lock") {
				t.Errorf("%s could not take its lock in the sandbox: %s", verb, tr.Text)
			}
		}
	}
	chain := toolResultsOf(api, "harness validate")
	if len(chain) != 1 || strings.Contains(chain[0].Text, "HARNESS TAMPER") || !strings.Contains(chain[0].Text, "PASS "+id) {
		t.Errorf("the verbs in one command did not run through to PASS: %+v", chain)
	}
	// The claim could not update the record (a PostToolUse adoption
	// outside the sandbox may have, by the time the next request came).
	log := p.progressLog()
	if !strings.Contains(log, "Starting ["+id+"]") {
		t.Errorf("the claim's log line is missing:\n%s", log)
	}
	adopted := strings.Contains(recordAfterClaim, `"in_progress"`)
	tampered := strings.Contains(log, "TAMPER harness-tasks.json was changed by Bash `harness claim "+id+"`")
	switch {
	case adopted == tampered:
		t.Errorf("the hook after the claim neither adopted it nor put the file back (adopted=%v, put back=%v):\nrecord before:\n%s\nrecord after:\n%s\nlog:\n%s",
			adopted, tampered, recordBefore, recordAfterClaim, log)
	case tampered:
		kept := keptCopies(t, p)
		if !strings.Contains(kept, `"in_progress"`) {
			t.Errorf("the claim's write (in_progress) is not what was kept:\n%s", kept)
		}
	}
}

// keptCopies is the text of every changed copy the integrity check kept.
func keptCopies(t *testing.T, p *project) string {
	t.Helper()
	var b strings.Builder
	dir := p.path(".harness-runtime/tampered")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b.WriteString(readOr(filepath.Join(dir, e.Name()), ""))
	}
	return b.String()
}

// TestScenarioSandboxComplete: in the sandbox, a task goes from claim to
// completed through the agent's own `harness claim`, `harness checkpoint`
// and `harness validate`. The verbs cannot update the record there, so
// each of their writes reaches the record only when the hook after the
// call (outside the sandbox) adopts it as a legal transition (the
// completion once it has run the task's validation itself).
func TestScenarioSandboxComplete(t *testing.T) {
	t.Parallel()
	p := newSandboxedProject(t)
	p.initState()
	id := p.add("Write alpha", "--validate", "test -f alpha.txt")
	api := fakeapi.New(t,
		fakeapi.Bash("harness claim "+id),
		fakeapi.Bash("harness checkpoint "+id+" 1/2 'half way'"),
		fakeapi.Bash("echo alpha > alpha.txt && harness validate "+id),
		fakeapi.Text("Done."),
	)
	res := p.run(api, "Work.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	if tk := p.task(id); tk.Status != "completed" || len(tk.Checkpoints) != 1 {
		t.Errorf("%s is %q with %d checkpoints, want completed with 1", id, tk.Status, len(tk.Checkpoints))
	}
	if log := p.progressLog(); strings.Contains(log, "TAMPER") || !strings.Contains(log, "Completed ["+id+"]") {
		t.Errorf("want the task completed with no TAMPER:\n%s", log)
	}
	if !strings.Contains(readOr(filepath.Join(p.recordDir(), "harness-tasks.json"), ""), `"completed"`) {
		t.Errorf("the record does not hold the completion")
	}
}

// TestScenarioSandboxGitConfig: with the sandbox on, the repository's
// configuration is the user's: a program it names (here a file system
// monitor) would be run by git from outside the sandbox, by the harness's
// own hooks among others. The model tries to name one with Write (not
// sandboxed: the guard refuses it, rule sandbox-paths) and with `git
// config` in Bash (Claude Code's sandbox keeps .git/config read-only): the
// file stays byte for byte, and the session goes on.
func TestScenarioSandboxGitConfig(t *testing.T) {
	t.Parallel()
	p := newSandboxedProject(t)
	p.initState()
	p.add("Write alpha", "--validate", "test -f alpha.txt")
	config := filepath.Join(p.Dir, ".git", "config")
	before := readOr(config, "(missing)")
	api := fakeapi.New(t,
		fakeapi.Write(config, "[core]\n\tfsmonitor = ./monitor.sh\n"),
		fakeapi.Bash("git config core.fsmonitor ./monitor.sh"),
		fakeapi.Text("Done."),
	)
	res := p.run(api, "Set up a file system monitor.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	if trs, ok := refusedBefore(api, "fsmonitor = ./monitor.sh", "Write", "harness [sandbox-paths]"); !ok {
		t.Errorf("the Write of .git/config was not refused by the harness: %+v", trs)
	}
	if trs := toolResultsOf(api, "git config core.fsmonitor"); len(trs) != 1 || !trs[0].IsError {
		t.Errorf("the sandboxed `git config` did not fail: %+v", trs)
	}
	if after := readOr(config, "(missing)"); after != before {
		t.Errorf(".git/config changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestScenarioSandboxTamperLockHeld: TestScenarioTamperLockHeld with the
// sandbox on, the project and the lock directory outside /tmp. A command
// in the sandbox can take an flock on the transaction lock's file (it
// opens it read-only) and write the tasks file, but its background
// process ends with the Bash call (observed here): the check after the
// call finds the lock free, and puts the forgery back as any.
func TestScenarioSandboxTamperLockHeld(t *testing.T) {
	t.Parallel()
	lockHeldForgery(t, newSandboxedProject(t), false)
}

// TestScenarioSandboxHeartbeatFIFO: TestScenarioHeartbeatFIFO with the
// sandbox on, the project outside /tmp. The runtime directory is the
// agent's to write in the sandbox too, so a sandboxed command can put the
// FIFO in the heartbeat's place; the hook, outside the sandbox, makes the
// mark again and denies the write of the tasks file at once.
func TestScenarioSandboxHeartbeatFIFO(t *testing.T) {
	t.Parallel()
	heartbeatFIFO(t, newSandboxedProject(t))
}
