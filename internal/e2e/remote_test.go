package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
	"github.com/harness-agent/harness/internal/testbin"
)

// TestScenarioWorkersRemote: two machines share one job through a git
// remote (a bare repository), each an installed project with its own home,
// record and lock directory: m1 publishes the job and runs 2 workers, m2
// (a clone, no `harness init`) joins with 1. The sessions are real Claude
// Code, whose hooks write the shared state through the remote. Five tasks
// with dependencies, two of them appending to one file from the same tip.
// At the end both supervisors say the job is done, every task was
// integrated exactly once into the remote's branch, which holds both
// conflicting lines in a linear history, and the trail (harness history)
// replays with no task held by two workers at once.
func TestScenarioWorkersRemote(t *testing.T) {
	t.Parallel()
	const tasks = 5 // the first five of workerJob: no slow task
	bare := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	m1 := newInstalledProject(t)
	m1.initState()
	for _, j := range workerJob[:tasks] {
		args := []string{"--validate", j.check, "--priority", j.priority}
		if j.deps != "" {
			args = append(args, "--depends-on", j.deps)
		}
		m1.add(j.title, args...)
	}
	m1.git("remote", "add", "origin", bare)
	m1.git("push", "-q", "origin", "main")
	m2 := newInstalledProject(t)
	m2.git("remote", "add", "origin", bare)
	m2.git("fetch", "-q", "origin")
	m2.git("reset", "-q", "--hard", "origin/main") // a clone of the project

	api := fakeapi.New(t, fakeapi.Loop(workerBrain))
	claude := RequireClaude(t)
	type machine struct {
		p    *project
		name string
		n    string
		out  strings.Builder
		mu   sync.Mutex
		done chan error
	}
	start := func(m *machine) {
		cmd := exec.Command(filepath.Join(m.p.Bin, "harness"), "workers", m.n, "--remote", "origin", "--machine", m.name, "--", "--dangerously-skip-permissions")
		cmd.Dir = m.p.Dir
		cmd.Env = append(runEnv(m.p, api), "HARNESS_CLAUDE="+claude, noRetries,
			"HARNESS_LEASE_SECONDS=30", "HARNESS_WORKTREES="+t.TempDir())
		cmd.Stdout = lockedWriter{&m.mu, &m.out}
		cmd.Stderr = cmd.Stdout
		cmd = testbin.AsPerson(cmd)
		m.done = make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { m.done <- cmd.Wait() }()
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
			}
		})
	}
	ms := []*machine{{p: m1, name: "m1", n: "2"}, {p: m2, name: "m2", n: "1"}}
	start(ms[0])
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if m1.git("ls-remote", "origin", "refs/harness/state") != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("m1 did not publish the job")
		}
	}
	start(ms[1])
	for _, m := range ms {
		select {
		case err := <-m.done:
			m.mu.Lock()
			output := m.out.String()
			m.mu.Unlock()
			if err != nil || !strings.Contains(output, "harness workers: job done: all 5 tasks integrated") {
				t.Fatalf("%s's harness workers: %v\n%s\nrequests:\n%s", m.name, err, output, api.Summary())
			}
		case <-time.After(8 * time.Minute):
			t.Fatalf("%s's harness workers did not finish in 8 minutes:\n%s", m.name, m.out.String())
		}
	}
	if !strings.Contains(ms[1].out.String(), "harness: joined the job shared through origin as machine m2") {
		t.Errorf("m2 did not join:\n%s", ms[1].out.String())
	}

	// Every task integrated exactly once into the remote's branch, in a
	// linear history holding both conflicting lines.
	remoteGit := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"--git-dir", bare}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	subjects := strings.Split(remoteGit("log", "--format=%s", "main"), "\n")
	if len(subjects) != tasks+1 {
		t.Errorf("the remote's main has %d commits, want %d:\n%s", len(subjects), tasks+1, strings.Join(subjects, "\n"))
	}
	for i := 1; i <= tasks; i++ {
		prefix := regexp.MustCompile(`^task-00` + string(rune('0'+i)) + `: `)
		n := 0
		for _, s := range subjects {
			if prefix.MatchString(s) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("task-00%d is on the remote's main %d times, want once", i, n)
		}
	}
	if merges := remoteGit("log", "--merges", "--oneline", "main"); merges != "" {
		t.Errorf("merge commits on the remote's main:\n%s", merges)
	}
	if c := remoteGit("show", "main:conflict.txt"); !strings.Contains(c, "three") || !strings.Contains(c, "four") {
		t.Errorf("conflict.txt on the remote's main holds %q, want both tasks' lines", c)
	}
	// Each task's ref on the remote holds it completed.
	completed := regexp.MustCompile(`"status": *"completed"`)
	for i := 1; i <= tasks; i++ {
		ref := "refs/harness/tasks/task-00" + string(rune('0'+i))
		if entry := remoteGit("show", ref+":task.json"); !completed.MatchString(entry) {
			t.Errorf("%s on the remote is not completed:\n%s", ref, entry)
		}
	}
	// Both machines' sessions ran under the hooks, on the shared state.
	trail := remoteGit("log", "--format=%s", "refs/harness/state", "--glob=refs/harness/tasks")
	for _, m := range []*project{m1, m2} {
		hooks := readOr(m.HookLog, "")
		for _, ev := range []string{`"event":"SessionStart"`, `"event":"PreToolUse"`, `"event":"PostToolUse"`, `"event":"Stop"`} {
			if !strings.Contains(hooks, ev) {
				t.Errorf("no %s hook ran in %s's sessions", ev, m.Dir)
			}
		}
	}
	// The trail replays: nothing held twice, nothing integrated twice.
	cmd := exec.Command(filepath.Join(m2.Bin, "harness"), "history")
	cmd.Dir = m2.Dir
	cmd.Env = runEnv(m2, api)
	out, err := testbin.AsPerson(cmd).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "no task was held by two workers at once, none was integrated twice") {
		t.Errorf("harness history: %v\n%s", err, out)
	}
	t.Logf("claims: m1 %d, m2 %d; %s", strings.Count(trail, "m1-w"), strings.Count(trail, "m2-w"), lastLineWith(string(out), "changes on origin"))
}
