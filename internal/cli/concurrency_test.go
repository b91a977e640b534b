package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/testbin"

	"github.com/harness-agent/harness/internal/state"
)

// harnessBin is the real harness binary, built once for the package's
// process-level tests.
var harnessBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "harness-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		// The test process's own state writes keep their record and locks
		// here, not in the user's home and /tmp.
		os.Setenv("HARNESS_RECORD_DIR", filepath.Join(dir, "records"))
		os.Setenv("HARNESS_LOCK_DIR", dir)
		harnessBin = filepath.Join(dir, "harness")
		if err := testbin.BuildInto(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		return m.Run()
	}()
	os.Exit(code)
}

// procEnv is the environment of a harness process in a test: private lock
// dir and home, a git identity, nothing inherited from a real session.
func procEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "HARNESS_") || strings.HasPrefix(k, "CLAUDE") || strings.HasPrefix(k, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	// The record is this process's: the tasks it writes itself
	// (gitProject) are the harness's own to the processes it starts.
	return append(env, append([]string{"HARNESS_LOCK_DIR=" + lockDir(t), "HOME=" + lockDir(t), "GIT_CONFIG_NOSYSTEM=1",
		"HARNESS_RECORD_DIR=" + os.Getenv("HARNESS_RECORD_DIR"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}, extra...)...)
}

var lockDirs sync.Map

// lockDir is one private directory per test, shared by its processes.
func lockDir(t *testing.T) string {
	if d, ok := lockDirs.Load(t.Name()); ok {
		return d.(string)
	}
	d := t.TempDir()
	lockDirs.Store(t.Name(), d)
	return d
}

// gitProject makes a committed git repository holding a state root with n
// pending tasks, in the given mode.
func gitProject(t *testing.T, mode string, n int) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	run := func(args ...string) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = procEnv(t)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%v: %s", args, out)
	}
	run("git", "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("x\n"), 0o644))
	run("git", "add", "-A")
	run("git", "commit", "-q", "-m", "baseline")
	run(harnessBin, "init")
	_, err = state.Update(dir, func(s *state.State) error {
		for i := 1; i <= n; i++ {
			s.AddTask(state.Task{ID: fmt.Sprintf("task-%03d", i), Title: fmt.Sprintf("Task %d", i), Status: state.Pending,
				Priority: "P1", MaxAttempts: 3, Command: "true"})
		}
		s.SetConfig("concurrency_mode", mode)
		return nil
	})
	require.NoError(t, err)
	return dir
}

// harness runs the binary in dir and returns its exit code and output.
func harness(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	cmd := exec.Command(harnessBin, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Errorf("harness %v: %v", args, err)
	}
	return code, stdout.String(), stderr.String()
}

// 32 workers claim concurrently, more claims than tasks: every task is
// claimed exactly once, by the worker that was told so, and no update is
// lost.
func TestConcurrentClaimsNeverDoubleClaim(t *testing.T) {
	const workers, perWorker, tasks = 32, 7, 200
	dir := gitProject(t, state.Concurrent, tasks)
	type claim struct{ worker, id string }
	var mu sync.Mutex
	var claims []claim
	nothing := 0
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				worker := fmt.Sprintf("w%02d-%d", g, i)
				code, out, errOut := harness(t, dir, procEnv(t, "HARNESS_WORKER_ID="+worker), "claim", "--json")
				var res struct {
					Claimed *struct {
						ID        string `json:"id"`
						ClaimedBy string `json:"claimed_by"`
					} `json:"claimed"`
					Why string `json:"why"`
				}
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Errorf("claim by %s: exit %d, bad JSON %q, stderr %q", worker, code, out, errOut)
					return
				}
				mu.Lock()
				switch {
				case code == 0 && res.Claimed != nil:
					claims = append(claims, claim{worker, res.Claimed.ID})
				case code == 1 && res.Claimed == nil:
					nothing++
				default:
					t.Errorf("claim by %s: exit %d, %s %s", worker, code, out, errOut)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d claims by %d concurrent workers in %s", workers*perWorker, workers, time.Since(start).Round(time.Millisecond))

	require.Len(t, claims, tasks, "every task claimed")
	assert.Equal(t, workers*perWorker-tasks, nothing)
	seen := map[string]string{}
	for _, c := range claims {
		if prev, dup := seen[c.id]; dup {
			t.Errorf("%s claimed by both %s and %s", c.id, prev, c.worker)
		}
		seen[c.id] = c.worker
	}
	s, err := state.Load(dir)
	require.NoError(t, err)
	for _, tk := range s.Tasks {
		assert.Equal(t, state.InProgress, tk.Status, tk.ID)
		assert.Equal(t, seen[tk.ID], tk.ClaimedBy, "%s: the state names the worker that was told it won", tk.ID)
	}
	log, err := os.ReadFile(filepath.Join(dir, "harness-progress.txt"))
	require.NoError(t, err)
	assert.Equal(t, tasks, strings.Count(string(log), "] Starting [task-"))
}

// Issue 2: concurrent adds lose no task and never reuse an id.
func TestConcurrentAddsLoseNothing(t *testing.T) {
	const adders = 32
	dir := gitProject(t, state.Exclusive, 0)
	var wg sync.WaitGroup
	ids := make(chan string, adders)
	for g := 0; g < adders; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, errOut := harness(t, dir, procEnv(t), "add", fmt.Sprintf("Task from adder %d", g), "--validate", "true")
			if code != 0 {
				t.Errorf("add %d: exit %d: %s", g, code, errOut)
			}
			ids <- strings.TrimSpace(out)
		}()
	}
	wg.Wait()
	close(ids)
	got := map[string]bool{}
	for id := range ids {
		assert.False(t, got[id], "id %s handed out twice", id)
		got[id] = true
	}
	s, err := state.Load(dir)
	require.NoError(t, err)
	require.Len(t, s.Tasks, adders)
	titles := map[string]bool{}
	for _, tk := range s.Tasks {
		assert.True(t, got[tk.ID], tk.ID)
		titles[tk.Title] = true
	}
	assert.Len(t, titles, adders, "every adder's task is there")
	for i := 1; i <= adders; i++ {
		assert.True(t, got[fmt.Sprintf("task-%03d", i)], "ids are task-001…task-%03d", adders)
	}
}
