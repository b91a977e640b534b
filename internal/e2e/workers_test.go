package e2e

import (
	"encoding/json"
	"fmt"
	"os"
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

// workerJob is the plan of TestScenarioWorkers: what each task's work
// writes (an append, so a retry on top of a task that conflicted still
// holds both) and its dependencies. task-003 and task-004 both write
// conflict.txt and are claimed first (P0), from the same tip: the second
// to be integrated conflicts. task-006's first attempt is slow: its
// session is killed mid-task.
var workerJob = []struct {
	title, file, line, deps, priority, check string
}{
	{"Alpha", "alpha.txt", "alpha", "", "P1", "test -f alpha.txt"},
	{"Beta", "beta.txt", "beta", "", "P1", "test -f beta.txt"},
	{"Three in conflict.txt", "conflict.txt", "three", "", "P0", "grep -q three conflict.txt"},
	{"Four in conflict.txt", "conflict.txt", "four", "", "P0", "grep -q four conflict.txt"},
	{"Gamma needs Alpha and Beta", "gamma.txt", "gamma", "task-001,task-002", "P1", "test -f alpha.txt && test -f beta.txt && test -f gamma.txt"},
	{"Slow delta", "delta.txt", "delta", "", "P2", "test -f delta.txt"},
	{"Epsilon", "epsilon.txt", "epsilon", "", "P2", "test -f epsilon.txt"},
	{"Zeta needs Gamma", "zeta.txt", "zeta", "task-005", "P2", "test -f gamma.txt && test -f zeta.txt"},
}

// slowMarker is the slow first attempt of task-006, which the test kills
// (a plain long sleep is refused by Claude Code's Bash tool).
const slowMarker = `node -e "setTimeout(() => {}, 120000)"`

// workerBrain answers every worker session's requests the way an agent
// following the skill would: claim, do the task, validate, claim again,
// until nothing is left to claim. It decides from the conversation (the
// last command it ran and what came back), so any number of sessions can
// share the one scripted model.
func workerBrain(r *fakeapi.Request) (fakeapi.Turn, bool) {
	cmd, result := lastBash(r)
	switch {
	case cmd == "", strings.HasPrefix(cmd, "harness validate "):
		return fakeapi.Bash("harness claim --json"), false
	case cmd == "harness claim --json":
		claimed, ok := claimedTask(result)
		if !ok {
			return fakeapi.Text("Nothing left for me to claim."), false
		}
		var n int
		fmt.Sscanf(claimed.ID, "task-%d", &n)
		if n < 1 || n > len(workerJob) {
			return fakeapi.Text("Unknown task."), false
		}
		job := workerJob[n-1]
		work := fmt.Sprintf("echo %s >> %s # work %s", job.line, job.file, claimed.ID)
		if n == 6 && claimed.Attempt == 1 {
			work = slowMarker + " && " + work
		}
		return fakeapi.Bash(work), false
	case strings.Contains(cmd, " # work task-"):
		id := cmd[strings.LastIndex(cmd, " # work ")+len(" # work "):]
		return fakeapi.Bash("harness validate " + id), false
	}
	return fakeapi.Text("Done."), false
}

// lastBash is the command of the last Bash call of the conversation and
// the text of its result; "" when the session has run none yet, or when
// the last thing it got was not that result (a hook's feedback after a
// text turn).
func lastBash(r *fakeapi.Request) (cmd, result string) {
	name, input, result := lastTool(r)
	if name == "Bash" {
		var in struct {
			Command string `json:"command"`
		}
		json.Unmarshal(input, &in)
		cmd = in.Command
	}
	return cmd, result
}

// lastTool is the name and input of the last tool call of the
// conversation and the text of its result; "" when the last thing the
// session got was not a tool's result.
func lastTool(r *fakeapi.Request) (name string, input json.RawMessage, result string) {
	msgs := r.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "assistant" {
			continue
		}
		for _, b := range msgs[i].Content {
			if b.Type == "tool_use" {
				name, input = b.Name, b.Input
			}
		}
		break
	}
	res := r.LastToolResults()
	if len(res) == 0 {
		return "", nil, ""
	}
	return name, input, res[len(res)-1].Text
}

// claimed is the task a `harness claim --json` printed.
type claimed struct {
	ID      string `json:"id"`
	By      string `json:"claimed_by"`
	Attempt int    `json:"attempt"`
}

// claimedTask reads what `harness claim --json` printed in result; ok is
// false when it claimed nothing.
func claimedTask(result string) (claimed, bool) {
	var out struct {
		Claimed *claimed `json:"claimed"`
	}
	if json.Unmarshal([]byte(firstJSONLine(result)), &out) != nil || out.Claimed == nil {
		return claimed{}, false
	}
	return *out.Claimed, true
}

func firstJSONLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "{") {
			return l
		}
	}
	return ""
}

// TestScenarioWorkers: `harness workers 3` runs three real Claude Code
// sessions at a time, each in its own worktree, on a plan of 8 tasks with
// dependencies, one pair made to conflict, and one session killed with
// SIGKILL mid-task. At the end every task is integrated exactly once and
// was validated on the merged tree, no task was held by two workers at
// once, and the integration branch's history is linear.
func TestScenarioWorkers(t *testing.T) {
	t.Parallel()
	p := newInstalledProject(t)
	p.initState()
	for _, j := range workerJob {
		args := []string{"--validate", j.check, "--priority", j.priority}
		if j.deps != "" {
			args = append(args, "--depends-on", j.deps)
		}
		p.add(j.title, args...)
	}
	api := fakeapi.New(t, fakeapi.Loop(workerBrain))
	claude := RequireClaude(t)

	cmd := exec.Command(filepath.Join(p.Bin, "harness"), "workers", "3", "--", "--dangerously-skip-permissions")
	cmd.Dir = p.Dir
	trees := t.TempDir()
	cmd.Env = append(runEnv(p, api), "HARNESS_CLAUDE="+claude, noRetries,
		"HARNESS_LEASE_SECONDS=15", "HARNESS_WORKTREES="+trees)
	var out strings.Builder
	var mu sync.Mutex
	cmd.Stdout = lockedWriter{&mu, &out}
	cmd.Stderr = cmd.Stdout
	cmd = testbin.AsPerson(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	killedWorker := ""
	deadline := time.After(8 * time.Minute)
	claim6 := regexp.MustCompile(`LOCK task-006 claimed \(lease_expires_at=\S+ worker=(w\d)\)`)
wait:
	for {
		select {
		case err := <-done:
			if err != nil {
				mu.Lock()
				t.Fatalf("harness workers: %v\n%s", err, out.String())
			}
			break wait
		case <-deadline:
			cmd.Process.Signal(os.Interrupt)
			<-done
			mu.Lock()
			t.Fatalf("harness workers did not finish in 8 minutes:\n%s\nrequests:\n%s", out.String(), api.Summary())
		case <-time.After(200 * time.Millisecond):
		}
		if killedWorker != "" {
			continue
		}
		m := claim6.FindStringSubmatch(p.progressLog())
		if m == nil {
			continue
		}
		// The claim is logged before the slow command starts: give the
		// session a moment to be in the middle of it.
		time.Sleep(2 * time.Second)
		pid := workerPID(p.Dir, m[1])
		if pid == 0 {
			continue
		}
		proc, err := os.FindProcess(pid)
		if err == nil {
			err = proc.Kill() // SIGKILL
		}
		if err != nil {
			t.Fatalf("kill %s's session (pid %d): %v", m[1], pid, err)
		}
		killedWorker = m[1]
		t.Logf("killed %s's session (pid %d) in the middle of task-006", m[1], pid)
	}
	mu.Lock()
	output := out.String()
	mu.Unlock()
	if !strings.Contains(output, "harness workers: job done: all 8 tasks integrated") {
		t.Fatalf("the job did not end done:\n%s", output)
	}
	if killedWorker == "" {
		t.Fatalf("task-006's session was never killed:\n%s", output)
	}
	log := p.progressLog()

	// Every task integrated exactly once, after its validation passed on
	// the merged tree.
	for i := range workerJob {
		id := fmt.Sprintf("task-%03d", i+1)
		tk := p.task(id)
		if tk.Status != "completed" {
			t.Errorf("%s is %s, want completed", id, tk.Status)
		}
		if n := strings.Count(log, "] MERGE ["+id+"] integrated into main as "); n != 1 {
			t.Errorf("%s integrated %d times, want once", id, n)
		}
	}
	// No task held by two workers at once.
	if err := checkExclusiveClaims(log); err != nil {
		t.Error(err)
	}
	// The conflict was found by the queue, and retried from the new tip.
	if !regexp.MustCompile(`\] ERROR \[task-00[34]\] \[MERGE\] conflict rebasing onto main at [0-9a-f]{7} in conflict.txt`).MatchString(log) {
		t.Errorf("no [MERGE] conflict on conflict.txt in the log")
	}
	if c := p.readFile("conflict.txt"); !strings.Contains(c, "three") || !strings.Contains(c, "four") {
		t.Errorf("conflict.txt on main holds %q, want both tasks' lines", c)
	}
	// The killed session's claim expired and the task went back to the pool.
	if !strings.Contains(log, "] RECOVERY [task-006] action=\"marked failed [SESSION_TIMEOUT] Lease expired\"") {
		t.Errorf("task-006's claim was not reaped after its session was killed")
	}
	if !strings.Contains(log, "] WORKER "+killedWorker+"'s session was killed") {
		t.Errorf("the supervisor did not log that %s's session was killed", killedWorker)
	}
	// A linear history: every task's commit once, no merge commit.
	if merges := p.git("log", "--merges", "--oneline", "main"); merges != "" {
		t.Errorf("merge commits on main:\n%s", merges)
	}
	subjects := strings.Split(p.git("log", "--format=%s", "main"), "\n")
	if len(subjects) != len(workerJob)+1 {
		t.Errorf("main has %d commits, want %d (baseline and one per task):\n%s", len(subjects), len(workerJob)+1, strings.Join(subjects, "\n"))
	}
	if t.Failed() {
		t.Logf("harness workers output:\n%s", output)
		for k := 1; k <= 3; k++ {
			t.Logf("w%d's sessions:\n%s", k, readOr(filepath.Join(workersDirIn(trees), fmt.Sprintf("w%d.log", k)), "(none)"))
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// workersDirIn is the one project directory under HARNESS_WORKTREES.
func workersDirIn(trees string) string {
	m, _ := filepath.Glob(filepath.Join(trees, "*"))
	if len(m) == 0 {
		return trees
	}
	return m[0]
}

// workerPID is the pid of worker id's running session, from the
// supervisor's status file.
func workerPID(dir, id string) int {
	var st struct {
		Workers []struct {
			ID    string `json:"id"`
			State string `json:"state"`
			PID   int    `json:"pid"`
		} `json:"workers"`
	}
	b, err := os.ReadFile(filepath.Join(dir, ".harness-runtime", "workers.json"))
	if err != nil || json.Unmarshal(b, &st) != nil {
		return 0
	}
	for _, w := range st.Workers {
		if w.ID == id && w.State == "running" {
			return w.PID
		}
	}
	return 0
}

// checkExclusiveClaims replays the log's claims and their ends: a task
// claimed while another worker's claim on it was live is an error.
func checkExclusiveClaims(log string) error {
	claimed := regexp.MustCompile(`\] LOCK (\S+) claimed \(lease_expires_at=\S+ worker=(\S+)\)$`)
	ended := regexp.MustCompile(`\] (?:MERGE \[(\S+)\] queued|ERROR \[(\S+)\]|RECOVERY \[(\S+)\]|LOCK (\S+) released)`)
	holder := map[string]string{}
	for _, l := range strings.Split(log, "\n") {
		if m := claimed.FindStringSubmatch(l); m != nil {
			if h := holder[m[1]]; h != "" {
				return fmt.Errorf("%s claimed by %s while %s held it: %s", m[1], m[2], h, l)
			}
			holder[m[1]] = m[2]
			continue
		}
		if m := ended.FindStringSubmatch(l); m != nil {
			for _, id := range m[1:] {
				if id != "" {
					delete(holder, id)
				}
			}
		}
	}
	return nil
}
