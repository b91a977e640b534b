package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-agent/harness/internal/plan/plantest"
)

// The figures of docs/perf.md ("An imported plan"): the real binary, a
// fresh committed project per run (not timed), a Taskmaster plan of n
// tasks. Run with
//
//	go test ./internal/cli -run '^$' -bench 'ImportClaim|EditWhere' -benchtime 5x

// BenchmarkImportClaim times `harness import tasks.json --validate true`
// and the `harness claim` that follows it.
func BenchmarkImportClaim(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			plan := plantest.Taskmaster(plantest.Tag{Name: "master", Tasks: n})
			var imp, claim time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir, env := benchProject(b, plan)
				b.StartTimer()
				imp += benchHarness(b, dir, env, "import", "tasks.json", "--validate", "true")
				claim += benchHarness(b, dir, env, "claim")
			}
			b.ReportMetric(float64(imp.Milliseconds())/float64(b.N), "import-ms")
			b.ReportMetric(float64(claim.Milliseconds())/float64(b.N), "claim-ms")
		})
	}
}

// BenchmarkEditWhere times the one edit that gives the 90 % of the tasks
// in tag master a check, the other 10 % (tag docs) left as they are.
func BenchmarkEditWhere(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			plan := plantest.Taskmaster(plantest.Tag{Name: "master", Tasks: n * 9 / 10}, plantest.Tag{Name: "docs", Tasks: n / 10})
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir, env := benchProject(b, plan)
				benchHarness(b, dir, env, "import", "tasks.json")
				b.StartTimer()
				benchHarness(b, dir, env, "edit", "--where", "source=taskmaster:master/*", "--validate", "true")
			}
		})
	}
}

// benchProject is a committed git project with the harness initialised
// and the plan written as tasks.json, and the environment of its harness
// processes: private lock and home directories, nothing of a session.
func benchProject(b *testing.B, plan []byte) (string, []string) {
	b.Helper()
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "HARNESS_") && !strings.HasPrefix(k, "CLAUDE") && !strings.HasPrefix(k, "GIT_") {
			env = append(env, kv)
		}
	}
	home := b.TempDir()
	env = append(env, "HARNESS_LOCK_DIR="+home, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "HARNESS_WORKER_ID=w1",
		"HARNESS_RECORD_DIR="+os.Getenv("HARNESS_RECORD_DIR"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	run := func(args ...string) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	run("git", "init", "-q")
	run(harnessBin, "init")
	run("git", "add", "-A")
	run("git", "commit", "-q", "-m", "baseline")
	if err := os.WriteFile(filepath.Join(dir, "tasks.json"), plan, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir, env
}

// benchHarness runs the harness binary in dir and returns its wall time;
// a failure ends the benchmark.
func benchHarness(b *testing.B, dir string, env []string, args ...string) time.Duration {
	cmd := exec.Command(harnessBin, args...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		b.Fatalf("harness %v: %v\n%.2000s", args, err, out)
	}
	return took
}
