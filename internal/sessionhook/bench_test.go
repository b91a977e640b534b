package sessionhook

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
)

// Run with: go test -run XXX -bench . -benchtime 200x ./internal/sessionhook
// (scripts/time-hooks.sh times the real executables end to end).

// benchState renders n realistic tasks: a third completed, one in progress
// (in concurrent mode: another worker's), the rest pending in a dependency
// chain.
func benchState(n int, concurrentMode bool) string {
	var b strings.Builder
	cfg := `{"concurrency_mode": "exclusive", "max_tasks_per_session": 20, "max_sessions": 500}`
	if concurrentMode {
		cfg = `{"concurrency_mode": "concurrent", "max_tasks_per_session": 20, "max_sessions": 500}`
	}
	fmt.Fprintf(&b, "{\n  \"version\": 2,\n  \"created\": \"2025-07-01T10:00:00Z\",\n  \"session_config\": %s,\n  \"tasks\": [\n", cfg)
	for i := 1; i <= n; i++ {
		status, extra := "pending", `"completed_at": null`
		switch {
		case i <= n/3:
			status, extra = "completed", `"completed_at": "2025-07-01T10:15:30Z"`
		case i == n/3+1:
			status, extra = "in_progress", `"completed_at": null, "claimed_by": "w2", "lease_expires_at": "2999-01-01T00:00:00Z"`
		}
		dep := "[]"
		if i > 1 && i != n/3+2 { // the chain restarts after the task in progress
			dep = fmt.Sprintf(`["task-%05d"]`, i-1)
		}
		fmt.Fprintf(&b, `    {"id": "task-%05d", "title": "Implement part %d of the system", "status": %q, "priority": "P%d", "depends_on": %s, "attempts": 1, "max_attempts": 3, "started_at_commit": "def5678", "validation": {"command": "go test ./part%d/...", "timeout_seconds": 300}, "on_failure": {"cleanup": null}, "error_log": [], "checkpoints": [{"step": 1, "total": 2, "description": "first half", "timestamp": "2025-07-01T10:05:00Z"}], %s}`,
			i, i, status, i%3, dep, i, extra)
		if i < n {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("  ],\n  \"session_count\": 7,\n  \"last_session\": null\n}\n")
	return b.String()
}

// benchLog writes a progress log of about size bytes.
func benchLog(b *testing.B, dir string, size int) {
	var chunk bytes.Buffer
	for i := 0; chunk.Len() < 1<<20; i++ {
		fmt.Fprintf(&chunk, "[2025-07-01T10:05:00Z] [SESSION-%d] CHECKPOINT [task-%05d] step=1/2 \"first half of the work, with a description of what was done\"\n", i%7, i%1000)
	}
	f, err := os.Create(progress.Path(dir))
	if err != nil {
		b.Fatal(err)
	}
	for written := 0; written < size; written += chunk.Len() {
		f.Write(chunk.Bytes())
	}
	f.Close()
}

// benchProject is an active project with n tasks and a log of logSize bytes,
// in a git repository.
func benchProject(b *testing.B, n, logSize int, concurrentMode bool) string {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for k, v := range map[string]string{
		"HARNESS_LOCK_DIR": b.TempDir(), "CLAUDE_PID": "1", "CLAUDE_CODE_SESSION_ID": sessionID,
		"CLAUDE_PROJECT_DIR": dir, "HARNESS_STATE_ROOT": "", "HARNESS_WORKER_ID": "w1", "HOME": b.TempDir(),
		"HARNESS_HOOK_LOG": "", "GIT_CONFIG_NOSYSTEM": "1", "HARNESS_REFLECT_ITERATIONS": "",
		"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com",
	} {
		b.Setenv(k, v)
	}
	os.WriteFile(filepath.Join(dir, "harness-tasks.json"), []byte(benchState(n, concurrentMode)), 0o644)
	os.WriteFile(filepath.Join(dir, root.ActiveMarker), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte("bench\n"), 0o644)
	benchLog(b, dir, logSize)
	for _, args := range [][]string{{"init", "-q"}, {"add", "README"}, {"commit", "-q", "-m", "baseline"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dir
}

var logSizes = []struct {
	name string
	size int
}{{"log=0MB", 0}, {"log=50MB", 50 << 20}}

// BenchmarkStop1000 is the Stop hook's hot path: work remains, the stop is
// blocked. warm: the state is unchanged since the last call (the summary is
// cached); cold: the tasks file changed (a checkpoint was recorded), so it is
// parsed again.
func BenchmarkStop1000(b *testing.B)  { benchStop(b, 1000) }
func BenchmarkStop10000(b *testing.B) { benchStop(b, 10000) }

func benchStop(b *testing.B, n int) {
	for _, ls := range logSizes {
		for _, cache := range []string{"warm", "cold"} {
			b.Run(ls.name+"/"+cache, func(b *testing.B) {
				dir := benchProject(b, n, ls.size, true)
				p := hook.Parse([]byte(`{"session_id":"` + sessionID + `","hook_event_name":"Stop","stop_hook_active":true}`))
				SessionStart(hook.Parse([]byte(`{"session_id":"` + sessionID + `","source":"startup"}`)))
				tasksFile := filepath.Join(dir, "harness-tasks.json")
				rt := ReadRuntime(record.Of(dir), sessionID)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					rt.Stop, rt.Stuck = Valve{}, Stuck{} // measure the block, not the valves
					rt.save(record.Of(dir))
					if cache == "cold" {
						at := time.Now().Add(time.Duration(i) * time.Millisecond)
						os.Chtimes(tasksFile, at, at)
					}
					b.StartTimer()
					if d := Stop(p); d.Kind != hook.Block {
						b.Fatalf("not blocked: %+v", d)
					}
				}
			})
		}
	}
}

// BenchmarkStopSteady is Stop as a session meets it between tasks, turn
// end after turn end on 1,000 tasks and a 50 MB log, with nothing put back
// between calls (BenchmarkStop1000 resets the valves before each, so each
// of its calls rewrites the runtime file whole): the valve counts, opens
// every few blocks and starts again, as in a session.
func BenchmarkStopSteady(b *testing.B) {
	benchProject(b, 1000, 50<<20, true)
	p := hook.Parse([]byte(`{"session_id":"` + sessionID + `","hook_event_name":"Stop","stop_hook_active":false}`))
	SessionStart(hook.Parse([]byte(`{"session_id":"` + sessionID + `","source":"startup"}`)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d := Stop(p); d.Kind != hook.Block && d.Kind != hook.Allow {
			b.Fatalf("neither blocked nor allowed: %+v", d)
		}
	}
}

// BenchmarkSessionStart1000 opens a session (count, recovery, dependency
// validation, context with git facts) on 1,000 tasks.
func BenchmarkSessionStart1000(b *testing.B) {
	for _, ls := range logSizes {
		b.Run(ls.name, func(b *testing.B) {
			benchProject(b, 1000, ls.size, true)
			p := hook.Parse([]byte(`{"session_id":"` + sessionID + `","source":"startup"}`))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if d := SessionStart(p); !strings.HasPrefix(d.Context, "HARNESS SESSION-") {
					b.Fatalf("context: %q", d.Context)
				}
			}
		})
	}
}

// idleProject is benchProject with n tasks and a 50 MB log between tasks:
// nothing in progress, no repository (no git process to wait for), and
// room for as many sessions as the benchmark counts (past max_sessions a
// start would measure the refusal instead).
func idleProject(b *testing.B, n int) string {
	dir := benchProject(b, n, 50<<20, true)
	os.RemoveAll(filepath.Join(dir, ".git"))
	data, _ := os.ReadFile(filepath.Join(dir, "harness-tasks.json"))
	idle := strings.Replace(string(data), `"status": "in_progress"`, `"status": "pending"`, 1)
	idle = strings.Replace(idle, `"max_sessions": 500`, `"max_sessions": 1000000000`, 1)
	os.WriteFile(filepath.Join(dir, "harness-tasks.json"), []byte(idle), 0o644)
	return dir
}

// BenchmarkSessionStartIdle is a session start between tasks (nothing in
// progress, the usual case after a session that ended cleanly) on 1,000
// and 10,000 tasks with a 50 MB log: the count is the one change, made
// without parsing the tasks (countFast).
func BenchmarkSessionStartIdle(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			idleProject(b, n)
			p := hook.Parse([]byte(`{"session_id":"` + sessionID + `","source":"startup"}`))
			SessionStart(p) // the first start builds the cache
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if d := SessionStart(p); !strings.HasPrefix(d.Context, "HARNESS SESSION-") {
					b.Fatalf("context: %q", d.Context)
				}
			}
		})
	}
}

// BenchmarkInactive is what every hook costs a project whose harness is off.
func BenchmarkInactive(b *testing.B) {
	dir := benchProject(b, 1000, 0, false)
	os.Remove(filepath.Join(dir, root.ActiveMarker))
	p := hook.Parse([]byte(`{"session_id":"` + sessionID + `","hook_event_name":"Stop","cwd":"` + dir + `"}`))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d := Stop(p); d.Kind != hook.Silent {
			b.Fatal(d)
		}
	}
}

// BenchmarkSubagentStop1000 is the SubagentStop hook on 1,000 tasks.
func BenchmarkSubagentStop1000(b *testing.B) {
	benchProject(b, 1000, 50<<20, true)
	p := hook.Parse([]byte(`{"session_id":"` + sessionID + `","agent_id":"a1","stop_hook_active":false}`))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		SubagentStop(p)
	}
}

// BenchmarkSessionStart10000 is the same on 10,000 tasks, in exclusive mode
// (the session lock is taken and released around every run).
func BenchmarkSessionStart10000(b *testing.B) {
	dir := benchProject(b, 10000, 50<<20, false)
	p := hook.Parse([]byte(`{"session_id":"` + sessionID + `","source":"startup"}`))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d := SessionStart(p); !strings.HasPrefix(d.Context, "HARNESS SESSION-") {
			b.Fatalf("context: %q", d.Context)
		}
		b.StopTimer()
		SessionEnd(hook.Parse([]byte(`{"session_id":"` + sessionID + `","reason":"other"}`)))
		_ = dir
		b.StartTimer()
	}
}

// BenchmarkSessionEnd1000 closes a session that did work on 1,000 tasks
// (exclusive mode): lock released, last_session written (one transactional
// write of the tasks file), a STATS line. "idle" is a session that logged
// nothing: the lock release alone.
func BenchmarkSessionEnd1000(b *testing.B) {
	for _, worked := range []bool{true, false} {
		name := "idle"
		if worked {
			name = "worked"
		}
		b.Run(name, func(b *testing.B) {
			dir := benchProject(b, 1000, 50<<20, false)
			start := hook.Parse([]byte(`{"session_id":"` + sessionID + `","source":"startup"}`))
			end := hook.Parse([]byte(`{"session_id":"` + sessionID + `","reason":"other"}`))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				SessionStart(start)
				if worked {
					progress.Append(dir, progress.Entry{Session: 1, Type: progress.Checkpoint, TaskID: "task-00001", Message: "step=1/2 \"x\""})
				}
				b.StartTimer()
				SessionEnd(end)
			}
		})
	}
}

// BenchmarkSessionStartCold is a session start with no cache (the first of
// a project, or after the hooks' runtime directory was removed), nothing in
// progress, no git: the tasks file is parsed whole and the cache built.
func BenchmarkSessionStartCold(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			dir := idleProject(b, n)
			p := hook.Parse([]byte(`{"session_id":"` + sessionID + `","source":"startup"}`))
			SessionStart(p)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				os.RemoveAll(filepath.Join(dir, root.RuntimeDir))
				b.StartTimer()
				if d := SessionStart(p); !strings.HasPrefix(d.Context, "HARNESS SESSION-") {
					b.Fatalf("context: %q", d.Context)
				}
			}
		})
	}
}

// cycleState renders n pending tasks that dependency validation fails
// whole: "ring", one cycle through all of them; "chain", each task
// depending on the next in the file and the last two on each other, so
// the failure spreads from the end of the file back to its start.
func cycleState(n int, shape string) string {
	var b strings.Builder
	b.WriteString("{\n  \"version\": 2,\n  \"tasks\": [\n")
	for i := 1; i <= n; i++ {
		dep := i%n + 1
		if shape == "chain" && i == n {
			dep = n - 1
		}
		fmt.Fprintf(&b, `    {"id": "task-%05d", "title": "Part %d", "status": "pending", "depends_on": ["task-%05d"], "validation": {"command": "true"}}`, i, i, dep)
		if i < n {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("  ],\n  \"session_count\": 0,\n  \"last_session\": null\n}\n")
	return b.String()
}

// BenchmarkSessionStartCycle10000 is the session start that finds 10,000
// tasks in a dependency cycle, or blocked by one, and marks every one of
// them failed [DEPENDENCY]: one write of the tasks file, 10,000 log lines.
func BenchmarkSessionStartCycle10000(b *testing.B) {
	for _, shape := range []string{"ring", "chain"} {
		b.Run(shape, func(b *testing.B) {
			dir := benchProject(b, 1, 0, false)
			tasks := []byte(cycleState(10000, shape))
			p := hook.Parse([]byte(`{"session_id":"` + sessionID + `","source":"startup"}`))
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				os.WriteFile(filepath.Join(dir, "harness-tasks.json"), tasks, 0o644)
				os.RemoveAll(filepath.Join(dir, root.RuntimeDir))
				b.StartTimer()
				if d := SessionStart(p); !strings.Contains(d.Context, "failed=10000") {
					b.Fatalf("context: %q", d.Context)
				}
				b.StopTimer()
				SessionEnd(hook.Parse([]byte(`{"session_id":"` + sessionID + `","reason":"other"}`)))
				b.StartTimer()
			}
		})
	}
}
