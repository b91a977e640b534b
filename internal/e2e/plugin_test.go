package e2e

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// TestScenarioPlugin: the repository as a Claude Code plugin, loaded with
// `claude --plugin-dir` from a clone where scripts/build.sh has run, and
// nothing else installed: no hooks in settings.json, no skill in
// ~/.claude/skills, no harness on PATH. The plugin alone brings the skill
// (namespaced /harness:harness), the hooks of hooks/hooks.json, and the
// harness command on the Bash tool's PATH from its bin/.
func TestScenarioPlugin(t *testing.T) {
	t.Parallel()
	p := setupProject(t, func(*testing.T, *project) {}) // nothing installed
	plugin := pluginClone(t, p.Bin)
	p.initState()
	id := p.add("Write the file", "--validate", "test -f task-001.txt")
	// The model's Bash tool must find harness through the plugin, not
	// through the PATH the scenarios usually give it.
	env := append(p.env(), "PATH="+pathWithout("harness"))
	run := func(api *fakeapi.Server, prompt string, extra ...string) *Result {
		t.Helper()
		res := Run(t, Options{
			Prompt: prompt, API: api, ProjectDir: p.Dir, Home: p.Home,
			Env:  append(append([]string(nil), env...), extra...),
			Args: []string{"--plugin-dir", plugin},
		})
		if res.ExitCode != 0 {
			t.Fatalf("session failed: %v", res)
		}
		return res
	}

	t.Run("status", func(t *testing.T) {
		api := fakeapi.New(t,
			fakeapi.Bash("command -v harness && harness status"),
			fakeapi.Text("Status shown."),
		)
		run(api, "/harness:harness status")
		// The Stop hook lets a status-only turn end while work remains:
		// the Bash call and the answer, nothing more.
		if n := len(api.MainRequests()); n != 2 {
			t.Errorf("the status turn took %d model requests, want 2 (the Stop hook pushed it into work?)", n)
		}

		first := api.Request(0)
		skill := filepath.Join(plugin, "skill", "harness")
		desc, body := splitSkill(readOr(filepath.Join(skill, "SKILL.md"), ""))
		if listing := "- harness:harness: " + clipRunes(desc, 60); !first.Contains(listing) {
			t.Errorf("the plugin's skill is not listed to the model as %q:\n%s", listing, clip(first.NewText()))
		}
		for _, line := range distinctiveLines(substituteSkill(body, "status", skill, p.Dir), 3) {
			if !first.Contains(line) {
				t.Errorf("`/harness:harness status` did not bring the skill body to the model: missing line %q", line)
			}
		}
		if !first.Contains(sessionStartText) || !first.Contains(id) {
			t.Errorf("the plugin's SessionStart hook did not put its context (naming %s) in the first request:\n%s", id, clip(first.NewText()))
		}
		trs := toolResultsOf(api, "command -v harness")
		want := filepath.Join(plugin, "bin", "harness")
		if len(trs) != 1 || trs[0].IsError || !strings.HasPrefix(strings.TrimSpace(trs[0].Text), want+"\n") {
			t.Errorf("the Bash tool did not find harness in the plugin's bin/ (%s): %+v", want, trs)
		}
	})

	t.Run("stop blocks while work remains", func(t *testing.T) {
		api := fakeapi.New(t, newWorker(p.Dir).Turn())
		run(api, "Work through the harness tasks.")
		fb := stopFeedbacks(api)
		if len(fb) == 0 || !strings.Contains(fb[0], "harness claim "+id) {
			t.Fatalf("the plugin's Stop hook did not block the premature stop with `harness claim %s`; feedbacks:\n%s", id, strings.Join(fb, "\n---\n"))
		}
		for _, verb := range []string{"harness claim", "harness validate"} {
			for _, tr := range toolResultsOf(api, verb) {
				if tr.IsError {
					t.Errorf("`%s` failed in the session: %s", verb, tr.Text)
				}
			}
		}
		if tk := p.task(id); tk.Status != "completed" {
			t.Errorf("%s is %q, want completed through the plugin's harness", id, tk.Status)
		}
	})
}

// pluginClone makes the part of a clone of this repository that Claude Code
// loads as a plugin: .claude-plugin/, hooks/hooks.json and launch.sh, skill/ and
// scripts/build.sh, with bin/ holding what scripts/build.sh built (bin, the
// scenarios' build of it, is copied rather than built a second time).
func pluginClone(t *testing.T, bin string) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "harness")
	for _, rel := range []string{".claude-plugin", filepath.Join("hooks", "hooks.json"), filepath.Join("hooks", "launch.sh"), "skill", filepath.Join("scripts", "build.sh"), "bin"} {
		from := filepath.Join(root, rel)
		if rel == "bin" {
			from = bin
		}
		if err := copyTree(from, filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// copyTree copies a file or a directory tree, keeping the file modes.
func copyTree(from, to string) error {
	return filepath.Walk(from, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// pathWithout is the test's PATH without the directories that hold an
// executable named program.
func pathWithout(program string) string {
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if !isExecutable(filepath.Join(dir, program)) {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}
