// Package e2e runs the real Claude Code CLI against the scripted fake model
// of package fakeapi, in a throwaway HOME and project directory, so the
// harness hooks can be tested under the CLI that will really call them.
//
// Unit tests of the hooks check what we think the contract is; only the real
// CLI shows what it is (hook output parsing, fail-open rules and feedback
// wording change between versions). Everything here is offline: the CLI talks
// only to a loopback fakeapi.Server.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
	"github.com/harness-agent/harness/internal/testbin"
)

// ClaudeCodeVersion is the @anthropic-ai/claude-code version the e2e tests
// are pinned to; .ci/install-claude.sh installs exactly this one. Bump both
// together, after re-running the smoke tests against the new version.
const ClaudeCodeVersion = "2.1.332"

// InstallDir is where .ci/install-claude.sh installs the CLI, relative to
// the repository root (gitignored).
const InstallDir = ".ci/claude-code"

// InstallHint tells a developer how to get the CLI the tests want.
const InstallHint = "install with: bash .ci/install-claude.sh (or set HARNESS_CLAUDE_BIN to a claude executable)"

// DefaultTimeout bounds one CLI run. A scripted session takes a second to
// ten (a sandboxed one runs its checks under bubblewrap); on a slow 2-core
// machine under load one took over 60 s, so the margin is wide, and a hang
// still fails within minutes.
const DefaultTimeout = 150 * time.Second

// FindClaude locates the Claude Code CLI: $HARNESS_CLAUDE_BIN if set (an
// error if it is not executable), else `claude` on PATH, else the copy
// .ci/install-claude.sh puts under InstallDir in the repository.
func FindClaude() (string, error) {
	if p := os.Getenv("HARNESS_CLAUDE_BIN"); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("HARNESS_CLAUDE_BIN=%q is not an executable file", p)
	}
	if p, err := exec.LookPath("claude"); err == nil {
		return p, nil
	}
	if root, err := RepoRoot(); err == nil {
		for _, rel := range []string{
			"node_modules/.bin/claude",
			// The native binary itself, in case npm skipped the
			// postinstall that copies it over the bin stub.
			"node_modules/@anthropic-ai/claude-code/bin/claude.exe",
		} {
			p := filepath.Join(root, InstallDir, rel)
			if isExecutable(p) && works(p) {
				return p, nil
			}
		}
	}
	return "", errors.New("real Claude Code CLI not found")
}

// RepoRoot is the directory holding go.mod, searched upwards from the
// working directory (a test's working directory is its package directory).
func RepoRoot() (string, error) { return testbin.RepoRoot() }

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// works rejects npm's placeholder stub, which exists but cannot run.
func works(p string) bool {
	_, err := claudeVersion(p)
	return err == nil
}

func claudeVersion(bin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = append(baseEnv(), "HOME="+os.TempDir(), "IS_SANDBOX=1")
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	v, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return v, nil
}

var (
	claudeOnce sync.Once
	claudeBin  string
	claudeVer  string
	claudeErr  error
)

// RequireClaude returns the CLI path or skips the test when there is none.
// With HARNESS_E2E_REQUIRED=1 (CI sets it) a missing CLI fails instead, so
// the e2e suite can never pass by silently skipping; so does a
// HARNESS_CLAUDE_BIN that does not run. A version other than
// ClaudeCodeVersion is logged, not refused: a developer may want to try a
// newer CLI.
//
// With -short (the quick lane, scripts/test.sh -short) the scenarios skip:
// each runs the real CLI, seconds apiece. HARNESS_E2E_REQUIRED=1 does not
// allow that either.
func RequireClaude(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		if os.Getenv("HARNESS_E2E_REQUIRED") == "1" {
			t.Fatal("-short skips the real Claude Code scenarios, and HARNESS_E2E_REQUIRED=1 requires them: run without -short")
		}
		t.Skip("a real Claude Code scenario; skipped with -short")
	}
	claudeOnce.Do(func() {
		claudeBin, claudeErr = FindClaude()
		if claudeErr == nil {
			claudeVer, claudeErr = claudeVersion(claudeBin)
			if claudeErr != nil {
				claudeErr = fmt.Errorf("%s --version: %w", claudeBin, claudeErr)
			}
		}
	})
	if claudeErr != nil {
		msg := fmt.Sprintf("%v: %s", claudeErr, InstallHint)
		// An explicit HARNESS_CLAUDE_BIN that does not work is a setup
		// mistake, not an absent CLI: say so loudly.
		if os.Getenv("HARNESS_E2E_REQUIRED") == "1" || os.Getenv("HARNESS_CLAUDE_BIN") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if claudeVer != ClaudeCodeVersion {
		t.Logf("e2e: using Claude Code %s from %s; tests are pinned to %s", claudeVer, claudeBin, ClaudeCodeVersion)
	}
	return claudeBin
}

// Options configure one CLI run.
type Options struct {
	// Prompt is the -p prompt (the user's message, or a "/skill args" line).
	Prompt string
	// API is the fake model server; required unless BaseURL is set.
	API *fakeapi.Server
	// BaseURL overrides API.URL() as ANTHROPIC_BASE_URL.
	BaseURL string
	// ProjectDir is the working directory (CLAUDE_PROJECT_DIR). Default: a
	// new temp dir.
	ProjectDir string
	// Home is the HOME of the run. Default: a new temp dir. Reuse one HOME
	// across runs to test --resume or state that persists in ~/.claude.
	Home string
	// Settings, if non-nil, is written to Home/.claude/settings.json: a
	// []byte or string is written as is, anything else is JSON-encoded
	// (e.g. the map HookSettings returns). Leave nil when an installer
	// has already written the file.
	Settings any
	// Env adds or overrides environment variables ("KEY=value"; later
	// entries win). "KEY=" switches a default off: the CLI treats an empty
	// value as unset (e.g. "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=").
	Env []string
	// Args are extra CLI arguments, placed before -p (e.g. "--plugin-dir",
	// dir, or "--resume", id).
	Args []string
	// Timeout bounds the run; default DefaultTimeout. A run that times out
	// fails the test.
	Timeout time.Duration
}

// Result is the outcome of one CLI run.
type Result struct {
	// ExitCode is the CLI's exit status.
	ExitCode int
	// Stdout and Stderr are the raw output streams.
	Stdout, Stderr string
	// JSON is stdout parsed (--output-format json prints one object);
	// nil if stdout was not JSON.
	JSON map[string]any
	// Result is JSON["result"]: the final assistant text.
	Result string
	// IsError is JSON["is_error"].
	IsError bool
	// Subtype is JSON["subtype"] ("success", "error_max_turns", ...).
	Subtype string
	// SessionID is JSON["session_id"].
	SessionID string
	// NumTurns is JSON["num_turns"].
	NumTurns int
	// Home and ProjectDir are the directories the run used.
	Home, ProjectDir string
	// Duration is the wall time of the run.
	Duration time.Duration
}

// Run runs `claude [Args] -p Prompt --output-format json
// --dangerously-skip-permissions` in opts.ProjectDir with a private HOME,
// against the fake API, and returns what it did. It skips the test when the
// CLI is missing (see RequireClaude) and fails it when the run times out or
// cannot start; a non-zero exit is returned, not judged, since some
// scenarios expect one.
func Run(t testing.TB, opts Options) *Result {
	t.Helper()
	bin := RequireClaude(t)

	baseURL := opts.BaseURL
	if baseURL == "" {
		if opts.API == nil {
			t.Fatal("e2e.Run: Options.API (or BaseURL) is required")
		}
		baseURL = opts.API.URL()
	}
	if opts.ProjectDir == "" {
		opts.ProjectDir = t.TempDir()
	}
	if opts.Home == "" {
		opts.Home = t.TempDir()
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Settings != nil {
		WriteSettings(t, opts.Home, opts.Settings)
	}

	args := append(append([]string(nil), opts.Args...),
		"-p", opts.Prompt, "--output-format", "json", "--dangerously-skip-permissions")
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = opts.ProjectDir
	cmd.Env = append(baseEnv(),
		"HOME="+opts.Home,
		"ANTHROPIC_BASE_URL="+baseURL,
		"ANTHROPIC_API_KEY=test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		// Root may use --dangerously-skip-permissions only in a sandbox.
		"IS_SANDBOX=1",
	)
	cmd.Env = append(cmd.Env, opts.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Hooks and Bash commands inherit the pipes; don't wait forever for
	// a grandchild that keeps them open after the CLI exits.
	cmd.WaitDelay = 5 * time.Second

	start := time.Now()
	err := cmd.Run()
	res := &Result{
		Stdout:     stdout.String(),
		Stderr:     stderr.String(),
		Home:       opts.Home,
		ProjectDir: opts.ProjectDir,
		Duration:   time.Since(start),
	}
	if ctx.Err() != nil {
		t.Fatalf("claude timed out after %v\nstdout:\n%s\nstderr:\n%s", opts.Timeout, res.Stdout, res.Stderr)
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	default:
		t.Fatalf("running claude: %v\nstderr:\n%s", err, res.Stderr)
	}
	res.parse()
	t.Logf("claude exited %d in %v: result=%q", res.ExitCode, res.Duration.Round(time.Millisecond), truncate(res.Result, 200))
	return res
}

func (r *Result) parse() {
	out := strings.TrimSpace(r.Stdout)
	// Tolerate stray lines before the JSON object: take the last line
	// that parses.
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var m map[string]any
		if json.Unmarshal([]byte(lines[i]), &m) == nil {
			r.JSON = m
			break
		}
	}
	if r.JSON == nil {
		var m map[string]any
		if json.Unmarshal([]byte(out), &m) == nil {
			r.JSON = m
		}
	}
	if r.JSON == nil {
		return
	}
	r.Result, _ = r.JSON["result"].(string)
	r.IsError, _ = r.JSON["is_error"].(bool)
	r.Subtype, _ = r.JSON["subtype"].(string)
	r.SessionID, _ = r.JSON["session_id"].(string)
	if n, ok := r.JSON["num_turns"].(float64); ok {
		r.NumTurns = int(n)
	}
}

// String summarises the result for failure messages.
func (r *Result) String() string {
	return fmt.Sprintf("exit=%d subtype=%q is_error=%v result=%q\nstdout:\n%s\nstderr:\n%s",
		r.ExitCode, r.Subtype, r.IsError, r.Result, truncate(r.Stdout, 4000), truncate(r.Stderr, 4000))
}

// baseEnv is the test process's environment minus everything that would
// make the CLI under test behave differently from a fresh user's: the
// variables of an outer Claude Code session (when tests run inside one),
// API credentials and endpoints, and config-location overrides.
func baseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "CLAUDECODE", k == "CLAUDE_PID",
			k == "XDG_CONFIG_HOME", k == "XDG_DATA_HOME", k == "XDG_STATE_HOME", k == "XDG_CACHE_HOME",
			strings.HasPrefix(k, "ANTHROPIC_"),
			strings.HasPrefix(k, "CLAUDE_"),
			strings.HasPrefix(k, "OTEL_"):
			continue
		}
		out = append(out, kv)
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
