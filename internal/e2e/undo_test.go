package e2e

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// TestScenarioUndo: the agent deletes a directory with Bash and overwrites a
// file with Write, which Claude Code's own checkpoints do not bring back
// (Bash), and runs `harness undo` itself, which is refused. The PreToolUse
// hook recorded the work tree before each step, so the person's `harness
// undo 2` brings both back byte for byte, tracked, untracked and ignored
// files alike, and a second `harness undo 2` returns to the state after the
// deletion. The project's own git is untouched.
func TestScenarioUndo(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	bin := make([]byte, 64<<10)
	rand.Read(bin)
	files := map[string]string{
		"src/main.go":             "package main\n\nfunc main() {}\n",
		"src/data/blob.bin":       string(bin),
		"src/data/crlf.txt":       "one\r\ntwo\r\n",
		"src/cache/gen.out":       "ignored, but small\n", // ignored by .gitignore
		"notes.txt":               "the agent's notes, never committed\n",
		".gitignore":              "src/cache/\n",
		"src/data/.gitattributes": "*.txt text eol=lf\n",
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(p.path(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		p.writeFile(name, content)
	}
	p.git("add", "src", ".gitignore")
	p.git("commit", "-q", "-m", "sources")
	p.initState()
	p.add("Tidy up", "--validate", "false") // pending work keeps the hooks on
	head := p.git("rev-parse", "HEAD")
	status := p.git("status", "--porcelain")

	var afterRm map[string]string
	api := fakeapi.New(t,
		fakeapi.Bash("cat notes.txt && git status --short"), // read-only: no checkpoint
		fakeapi.Bash("rm -rf src"),
		fakeapi.Func(func(r *fakeapi.Request) fakeapi.Turn {
			afterRm = snapshotFiles(t, p.Dir)
			return fakeapi.Write(p.path("notes.txt"), "overwritten by the agent\n")
		}),
		fakeapi.Bash("harness undo 2"),
		fakeapi.Text("Done."),
	)
	res := p.run(api, "Clean up the project.")
	if res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	if p.exists("src") || p.readFile("notes.txt") != "overwritten by the agent\n" {
		t.Fatalf("the agent's steps did not run as scripted (src exists: %v, notes: %q)", p.exists("src"), p.readFile("notes.txt"))
	}
	if refused, ok := refusedBefore(api, "harness undo 2", "Bash", "harness undo"); !ok {
		t.Errorf("the agent's own `harness undo` was not refused by PreToolUse: %+v", refused)
	}
	after := snapshotFiles(t, p.Dir)

	list := p.harness("undo", "--list")
	lines := strings.Split(list, "\n")
	if len(lines) < 3 || !strings.HasSuffix(lines[0], "before Write: "+p.path("notes.txt")) || !strings.HasSuffix(lines[1], "before Bash: rm -rf src") || strings.HasPrefix(lines[2], "  3 ") {
		t.Fatalf("harness undo --list: want the Write, then the rm, and nothing for the read-only call:\n%s", list)
	}

	out := p.harness("undo", "2")
	if !strings.Contains(out, "put back as at checkpoint 2") {
		t.Errorf("harness undo 2 said:\n%s", out)
	}
	for name, want := range files {
		if got := readOr(p.path(name), "(missing)"); got != want {
			t.Errorf("after harness undo 2, %s is not byte for byte what it was (%d bytes, want %d)", name, len(got), len(want))
		}
	}
	if got := p.git("rev-parse", "HEAD"); got != head {
		t.Errorf("the project's HEAD moved: %s, was %s", got, head)
	}
	if st := p.git("status", "--porcelain"); st != status {
		t.Errorf("after the undo the project's git status is not what it was before the session:\n%s\nwas:\n%s", st, status)
	}

	p.harness("undo", "2")
	if got := snapshotFiles(t, p.Dir); !sameFiles(got, afterRm) {
		t.Errorf("the second harness undo 2 is not the state after the deletion:\ngot  %v\nwant %v", keys(got), keys(afterRm))
	}
	// ... and the state the agent left is still there: checkpoint 2 now,
	// the one the first undo took.
	p.harness("undo", "2")
	if got := snapshotFiles(t, p.Dir); !sameFiles(got, after) {
		t.Errorf("a third harness undo 2 is not the state the agent left:\ngot  %v\nwant %v", keys(got), keys(after))
	}
}

// snapshotFiles reads every file of dir but .git and the harness's own.
func snapshotFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() && (rel == ".git" || strings.HasPrefix(rel, ".harness-")) {
			return filepath.SkipDir
		}
		if d.IsDir() || strings.HasPrefix(rel, "harness-") || strings.HasPrefix(rel, ".harness-") {
			return nil
		}
		data, err := os.ReadFile(path)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestScenarioUndoQuietTree: before a call that may change the tree, a
// checkpoint is made when the tree changed since the last one. When it did
// not, PreToolUse tells so from the tree's stat alone, without git, and
// makes none; a change made since is never missed. Five Bash calls, two of
// them after a pause long enough for the tree's state to be kept: three
// checkpoints, each holding what the tree held before its call.
func TestScenarioUndoQuietTree(t *testing.T) {
	t.Parallel()
	p := newInstalledProject(t)
	p.writeFile("notes.txt", "zero\n")
	p.initState()
	p.add("Tidy up", "--validate", "false")
	pause := func(turn fakeapi.Turn) fakeapi.Turn {
		return fakeapi.Func(func(*fakeapi.Request) fakeapi.Turn {
			time.Sleep(2500 * time.Millisecond) // longer than the two quiet seconds a kept state needs
			return turn
		})
	}
	api := fakeapi.New(t,
		pause(fakeapi.Bash("printf 'one\\n' > notes.txt")), // checkpoint: zero
		pause(fakeapi.Bash("sh -c true")),                  // checkpoint: one
		fakeapi.Bash("sh -c true"),                         // nothing changed: none
		fakeapi.Bash("printf 'two\\n' > notes.txt"),        // nothing changed: none
		fakeapi.Bash("sh -c true"),                         // checkpoint: two
		fakeapi.Text("Done."),
	)
	if res := p.run(api, "/harness status"); res.ExitCode != 0 {
		t.Fatalf("session failed: %v", res)
	}
	if got := p.readFile("notes.txt"); got != "two\n" {
		t.Fatalf("the scripted calls did not run: notes.txt is %q", got)
	}
	list := strings.Split(p.harness("undo", "--list"), "\n")
	want := []string{"before Bash: sh -c true", "before Bash: sh -c true", "before Bash: printf 'one\\n' > notes.txt"}
	if len(list) < len(want) || strings.Contains(strings.Join(list, "\n"), "  4 ") {
		t.Fatalf("harness undo --list: want exactly three checkpoints:\n%s", strings.Join(list, "\n"))
	}
	for i, w := range want {
		if !strings.HasSuffix(list[i], w) {
			t.Errorf("checkpoint %d is %q, want one %q", i+1, list[i], w)
		}
	}
	p.harness("undo", "2")
	if got := p.readFile("notes.txt"); got != "one\n" {
		t.Errorf("harness undo 2: notes.txt is %q, want %q", got, "one\n")
	}
	// The oldest, wherever the undo's own checkpoint put it in the list.
	n := ""
	for _, l := range strings.Split(p.harness("undo", "--list"), "\n") {
		if strings.HasSuffix(l, want[2]) {
			n = strings.Fields(l)[0]
		}
	}
	if n == "" {
		t.Fatalf("the checkpoint %q is gone from the list", want[2])
	}
	p.harness("undo", n)
	if got := p.readFile("notes.txt"); got != "zero\n" {
		t.Errorf("harness undo %s: notes.txt is %q, want %q", n, got, "zero\n")
	}
}
