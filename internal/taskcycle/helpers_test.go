package taskcycle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/gittest"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/state"
)

// isolate gives the test process a private lock dir and home, a git
// identity, and no inherited harness or Claude Code variables. Lock paths
// are per state root, so parallel tests never share one.
func isolate() (cleanup func()) {
	tmp, err := os.MkdirTemp("", "cycle-test-")
	if err != nil {
		panic(err)
	}
	for k, v := range map[string]string{
		"HARNESS_LOCK_DIR": tmp, "HOME": tmp, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
	} {
		os.Setenv(k, v)
	}
	for _, k := range []string{"HARNESS_STATE_ROOT", "CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PID", "HARNESS_WORKER_ID", "HARNESS_LEASE_SECONDS"} {
		os.Unsetenv(k)
	}
	return func() { os.RemoveAll(tmp) }
}

// repo is a git repository whose top is a state root with tasks.
type repo struct {
	t    *testing.T
	dir  string
	base string // the baseline commit
	now  time.Time
}

// newProject makes a repository with a baseline commit and a state file in
// the given mode; the harness files are ignored, as `harness init` does.
func newProject(t *testing.T, mode string, tasks ...state.Task) *repo {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	p := &repo{t: t, dir: dir, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	p.sh("git init -q")
	p.write("README", "readme\n")
	p.write("src/app.txt", "v1\n")
	p.write(".git/info/exclude", "/harness-tasks.json\n/harness-tasks.json.bak\n/harness-progress.txt\n/.harness-*\n")
	p.sh("git add -A && git commit -q -m baseline")
	p.base = p.head()
	require.NoError(t, state.Create(dir, p.now))
	_, err = state.Update(dir, func(s *state.State) error {
		for _, tk := range tasks {
			if tk.Status == "" {
				tk.Status = state.Pending
			}
			if tk.MaxAttempts == 0 {
				tk.MaxAttempts = 3
			}
			s.AddTask(tk)
		}
		return nil
	})
	require.NoError(t, err)
	if mode == state.Concurrent {
		p.setJSON(`"concurrency_mode": "exclusive"`, `"concurrency_mode": "concurrent"`)
	}
	return p
}

// setJSON edits the tasks file by text replacement, as a human would, and
// adopts the edit as `harness adopt` does (else the next check puts it
// back).
func (p *repo) setJSON(old, new string) {
	p.t.Helper()
	raw := p.read("harness-tasks.json")
	require.Contains(p.t, raw, old)
	p.write("harness-tasks.json", strings.Replace(raw, old, new, 1))
	p.adopt()
}

// adopt makes the tasks file as it is the harness's own: its backup and
// the record follow it, as `harness adopt` does.
func (p *repo) adopt() {
	p.t.Helper()
	require.NoError(p.t, state.Restore(p.dir, []byte(p.read(state.FileName))))
}

func (p *repo) worker(id string) *Worker {
	w := New(p.dir, p.dir)
	w.ID = id
	w.Now = func() time.Time { return p.now }
	return w
}

func (p *repo) sh(script string) string {
	p.t.Helper()
	return shIn(p.t, p.dir, script)
}

var shIn = gittest.Sh

func (p *repo) write(name, body string) {
	p.t.Helper()
	path := filepath.Join(p.dir, name)
	require.NoError(p.t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(p.t, os.WriteFile(path, []byte(body), 0o644))
}

func (p *repo) read(name string) string {
	p.t.Helper()
	data, err := os.ReadFile(filepath.Join(p.dir, name))
	require.NoError(p.t, err)
	return string(data)
}

func (p *repo) exists(name string) bool {
	_, err := os.Stat(filepath.Join(p.dir, name))
	return err == nil
}

func (p *repo) head() string { return p.sh("git rev-parse HEAD") }

func (p *repo) task(id string) state.Task {
	p.t.Helper()
	s, err := state.Load(p.dir)
	require.NoError(p.t, err)
	tk := s.Task(id)
	require.NotNil(p.t, tk, id)
	return *tk
}

func (p *repo) log() string { return p.read(progress.FileName) }

func task(id, command string) state.Task {
	return state.Task{ID: id, Title: "Title of " + id, Status: state.Pending, Priority: "P1", Command: command, TimeoutSeconds: 30, MaxAttempts: 3}
}
