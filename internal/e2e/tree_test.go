package e2e

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/harness-agent/harness/internal/e2e/fakeapi"
)

// TestScenarioSessionStartTree: the session start's git line across real
// sessions. A session writes a file; the next session's context says the
// tree is dirty with that file. Left quiet, the tree's state is kept (the
// record's .tree-cache-*) and the next session says the same; a session
// that then writes another file is seen by the one after it, kept answer
// or not; after the person commits, the context has the new HEAD and a
// clean tree.
func TestScenarioSessionStartTree(t *testing.T) {
	t.Parallel()
	p := newInstalledProject(t)
	p.initState()
	p.add("Pending work", "--validate", "test -f done.txt")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "the plan")

	// status runs a `/harness status` session whose model does turns and
	// answers; it returns the context the session started with.
	status := func(turns ...fakeapi.Turn) string {
		t.Helper()
		api := fakeapi.New(t, append(turns, fakeapi.Text("Status shown."))...)
		if res := p.run(api, "/harness status"); res.ExitCode != 0 {
			t.Fatalf("session failed: %v", res)
		}
		first := api.Request(0)
		if !first.Contains(sessionStartText) {
			t.Fatalf("no SessionStart context in the first request:\n%s", clip(first.NewText()))
		}
		return first.Text()
	}
	line := regexp.MustCompile(`git: HEAD [0-9a-f]{7} ([^;]*); tree ([^\\\n]*)`)
	gitLine := func(context string) (subject, tree string) {
		t.Helper()
		m := line.FindStringSubmatch(context)
		if m == nil {
			t.Fatalf("no git line in the SessionStart context:\n%s", clip(context))
		}
		return m[1], m[2]
	}

	if subject, tree := gitLine(status(fakeapi.Write(filepath.Join(p.Dir, "notes.txt"), "draft\n"))); subject != "the plan" || tree != "clean" {
		t.Errorf("first session: HEAD %q, tree %q; want \"the plan\", clean", subject, tree)
	}
	const dirty = "dirty (1 changed: notes.txt)"
	if _, tree := gitLine(status()); tree != dirty {
		t.Errorf("the session after the one that wrote notes.txt says the tree is %q, want %q", tree, dirty)
	}

	// Quiet for longer than the two seconds an answer must wait to be kept.
	time.Sleep(2500 * time.Millisecond)
	if _, tree := gitLine(status()); tree != dirty {
		t.Errorf("tree %q, want %q", tree, dirty)
	}
	kept, _ := filepath.Glob(filepath.Join(p.Home, ".local", "state", "harness", "records", "*", ".tree-cache-*"))
	if len(kept) != 1 {
		t.Errorf("want git's answer kept in one .tree-cache-* file of the record, found %v", kept)
	}
	// From the kept answer; this session's model writes another file, which
	// the next session start must see.
	if _, tree := gitLine(status(fakeapi.Write(filepath.Join(p.Dir, "more.txt"), "more\n"))); tree != dirty {
		t.Errorf("from the kept answer: tree %q, want %q", tree, dirty)
	}
	if _, tree := gitLine(status()); tree != "dirty (2 changed: more.txt notes.txt)" {
		t.Errorf("after a session wrote more.txt over a kept answer: tree %q, want both files", tree)
	}

	// The person commits the notes: a new HEAD, a clean tree.
	p.git("add", "notes.txt", "more.txt")
	p.git("commit", "-q", "-m", "notes")
	if subject, tree := gitLine(status()); subject != "notes" || tree != "clean" {
		t.Errorf("after the person's commit: HEAD %q, tree %q; want \"notes\", clean", subject, tree)
	}
}
