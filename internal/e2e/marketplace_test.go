package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// TestScenarioMarketplace: the repository is its own plugin marketplace. A
// user adds it (`claude plugin marketplace add DIR`) and installs the
// plugin (`claude plugin install harness@harness`); the installed copy has
// no bin/. With Go on PATH, the first hook builds the executables through
// hooks/launch.sh and the session gets the harness (SessionStart context,
// the namespaced skill); without Go, every hook answers quietly and the
// session goes on, told once (systemMessage) how to get the executables.
func TestScenarioMarketplace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		withGo bool
	}{{"with go", true}, {"without go", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Claude Code runs a local marketplace's plugin from the
			// directory itself: one copy each, or the two would share bin/.
			market := marketplaceCopy(t)
			p := setupProject(t, func(*testing.T, *project) {}) // nothing installed
			claude := RequireClaude(t)
			env := append(baseEnv(), "HOME="+p.Home, "IS_SANDBOX=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
			for _, args := range [][]string{{"plugin", "marketplace", "add", market}, {"plugin", "install", "harness@harness"}} {
				cmd := exec.Command(claude, args...)
				cmd.Dir, cmd.Env = p.Dir, env
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			p.initState()
			id := p.add("Write the file", "--validate", "test -f task-001.txt")

			path := pathWithout("harness")
			if !tc.withGo {
				path = pathWithout("go")
			}
			extra := append(p.env(), "PATH="+path)
			extra = append(extra, goCaches(t)...) // a warm build: the Go caches stay the developer's
			api := fakeapi.New(t, fakeapi.Text("Looked."))
			res := Run(t, Options{Prompt: "/harness:harness status", API: api, ProjectDir: p.Dir, Home: p.Home, Env: extra})
			if res.ExitCode != 0 || res.Result != "Looked." {
				t.Fatalf("session: %v", res)
			}
			first := api.Request(0)
			installed := pluginRoot(t, p.Home, market)
			if tc.withGo {
				if !first.Contains(sessionStartText) || !first.Contains(id) {
					t.Errorf("the marketplace plugin's SessionStart hook did not brief the session:\n%s", clip(first.NewText()))
				}
				if !isExecutable(filepath.Join(installed, "bin", "harness-stop")) {
					t.Errorf("the launcher did not build the executables into %s/bin", installed)
				}
				if !first.Contains("harness:harness") {
					t.Errorf("the plugin's skill is not offered to the model")
				}
				return
			}
			if first.Contains(sessionStartText) {
				t.Errorf("a session start context without executables?")
			}
			if _, err := os.Stat(filepath.Join(installed, "bin")); err == nil {
				t.Errorf("bin/ appeared without Go")
			}
			// What the user is shown: the launcher's one message.
			out := runLauncher(t, installed, path)
			if !strings.Contains(out, `"systemMessage":"harness plugin: its executables are missing from `+installed+`/bin`) {
				t.Errorf("launcher without executables and Go printed %q", out)
			}
		})
	}
}

// runLauncher runs the installed plugin's launcher for SessionStart as
// Claude Code does, with PATH, and returns its stdout.
func runLauncher(t *testing.T, plugin, path string) string {
	t.Helper()
	cmd := exec.Command("sh", filepath.Join(plugin, "hooks", "launch.sh"), "harness-session-start")
	cmd.Env = append(baseEnv(), "PATH="+path, "CLAUDE_PLUGIN_ROOT="+plugin)
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"SessionStart","source":"startup"}`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("launch.sh: %v", err)
	}
	return string(out)
}

// pluginRoot is the directory the installed plugin runs from
// (CLAUDE_PLUGIN_ROOT): for a marketplace on the local disk, the pinned
// CLI runs it from the marketplace directory itself, not from its copy in
// ~/.claude/plugins/cache.
func pluginRoot(t *testing.T, home, market string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(home, ".claude", "plugins", "cache", "harness", "harness", "*"))
	if len(matches) != 1 {
		t.Fatalf("want one installed copy of the plugin, found %v", matches)
	}
	if _, err := os.Stat(filepath.Join(matches[0], "bin")); err == nil {
		return matches[0] // a later CLI running it from its cache
	}
	return market
}

// marketplaceCopy is this repository's files (tracked and new, as git
// lists them) in a fresh directory: what a user's clone holds, without
// bin/ or .git.
func marketplaceCopy(t *testing.T) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "harness")
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if rel == "" || strings.HasPrefix(rel, ".ci/") {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(root, rel)); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := copyTree(filepath.Join(root, rel), filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
