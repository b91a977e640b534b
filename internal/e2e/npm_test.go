package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
	"github.com/harness-agent/harness/internal/testbin"
)

// TestScenarioNPM: the npm route with no Go on the user's side. The npm
// packages scripts/release.sh packs (this platform's only, to keep the
// test short) are installed offline into a throw-away prefix; the package's
// `harness install` puts the executables, the skill and the hooks in a
// throw-away HOME; then a real Claude Code session runs those hooks.
func TestScenarioNPM(t *testing.T) {
	t.Parallel()
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("HARNESS_E2E_REQUIRED") == "1" {
			t.Fatal("npm is not on PATH (apt-get install -y nodejs npm)")
		}
		t.Skip("npm is not on PATH: the npm route is not tested")
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := setupProject(t, func(*testing.T, *project) {}) // nothing installed yet
	out := t.TempDir()
	release := exec.Command(filepath.Join(root, "scripts", "release.sh"), "1.2.3", out)
	release.Dir = root
	release.Env = append(append(baseEnv(), "HARNESS_RELEASE_PLATFORMS="+runtime.GOOS+"/"+runtime.GOARCH), goCaches(t)...)
	if b, err := release.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release.sh: %v\n%s", err, b)
	}
	tarballs, _ := filepath.Glob(filepath.Join(out, "npm", "*.tgz"))
	if len(tarballs) != 2 {
		t.Fatalf("want the main package and this platform's, got %v", tarballs)
	}

	prefix := t.TempDir()
	install := exec.Command(npm, append([]string{"install", "--offline", "--no-audit", "--no-fund", "--prefix", prefix}, tarballs...)...)
	install.Env = append(baseEnv(), "HOME="+p.Home, "npm_config_cache="+filepath.Join(t.TempDir(), "npm-cache"), "npm_config_update_notifier=false")
	if b, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v\n%s", err, b)
	}
	harness := filepath.Join(prefix, "node_modules", ".bin", "harness")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(harness, args...)
		cmd.Dir = p.Dir
		cmd.Env = append(baseEnv(), "HOME="+p.Home, "PATH="+pathWithout("harness"))
		if testbin.PersonVerbs[args[0]] {
			cmd = testbin.AsPerson(cmd)
		}
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("harness %s (npm): %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	if v := run("version"); !strings.HasPrefix(v, "harness 1.2.3 ") || strings.Contains(v, "commit unknown") {
		t.Errorf("the npm package's harness says %q, want version 1.2.3 and the commit it was built from", v)
	}
	if got := run("install"); !strings.Contains(got, "harness install: installed.") {
		t.Errorf("harness install through npm:\n%s", got)
	}
	p.Bin = filepath.Join(p.Home, ".claude", "harness", "bin")
	for _, f := range []string{filepath.Join(p.Bin, "harness-stop-failure"), filepath.Join(p.Home, ".claude", "skills", "harness", "SKILL.md")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the npm install did not put %s in place", f)
		}
	}
	settings := readOr(filepath.Join(p.Home, ".claude", "settings.json"), "")
	if !strings.Contains(settings, `"`+filepath.Join(p.Bin, "harness-session-start")+`"`) {
		t.Errorf("settings.json does not run the installed hooks:\n%s", settings)
	}

	// The npm prefix may go (npm cache cleanups, an uninstall): the hooks
	// run from their own copies.
	os.RemoveAll(prefix)
	p.initState()
	id := p.add("Write the file", "--validate", "test -f npm.txt")
	api := fakeapi.New(t, fakeapi.Text("Looked."))
	res := p.run(api, "/harness status")
	if res.ExitCode != 0 {
		t.Fatalf("session: %v", res)
	}
	if first := api.Request(0); !first.Contains(sessionStartText) || !first.Contains(id) {
		t.Errorf("the npm-installed SessionStart hook did not brief the session:\n%s", clip(first.NewText()))
	}
	if log := readOr(p.HookLog, ""); !strings.Contains(log, `"event":"SessionStart"`) || !strings.Contains(log, `"event":"Stop"`) {
		t.Errorf("the npm-installed hooks did not run; hook log:\n%s", log)
	}
}
