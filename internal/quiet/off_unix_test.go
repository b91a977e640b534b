//go:build linux || darwin || freebsd || netbsd

package quiet_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/quiet"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
)

// layout is one arrangement of a disk and an environment a hook may be run
// in. Paths are relative to the test's directory unless they begin with a
// slash; "-" is unset.
type layout struct {
	tasks, marker, recorded string // directories holding each; "" none
	tasksLink               bool   // the tasks file is a dangling link
	recordedGone            bool   // the recorded project's tasks file is gone
	projectDir, stateRoot   string
	cwd                     string // the payload's, as JSON text; "" absent
	wd                      string // the process's
}

// The hooks' own lookups, each as the hook following a rule makes it.
func hookFinds(rule quiet.Rule, doc []byte) bool {
	cwd := hook.Parse(doc).Cwd() // sessionhook.locate
	orProject := afterPlace(doc)
	switch rule {
	case quiet.Switched:
		for _, c := range []string{cwd, orProject} {
			if d := root.Find(c); d != "" && root.Active(d) {
				return true
			}
		}
		return false
	case quiet.Rooted, quiet.Ended: // (no judgement is kept in these layouts)
		return root.Find(cwd) != ""
	case quiet.Settled:
		// sessionhook.locate, then SessionStart's and UserPromptSubmit's
		// settling of a harness switched off (integrity.SettleOff,
		// root.OwnRuntimeDir).
		d := root.Find(cwd)
		if d == "" {
			return false
		}
		m, ok := record.Of(d).Mark()
		runtime, err := os.Lstat(filepath.Join(d, root.RuntimeDir))
		return root.Active(d) || ok && m.Active || ok && m.Root == d && err == nil && !runtime.IsDir()
	default:
		return integrity.Root(orProject) != ""
	}
}

// afterPlace is where the hooks around a tool call look from
// (guard.Check, guard.After): the payload's cwd, else $CLAUDE_PROJECT_DIR.
func afterPlace(doc []byte) string {
	if cwd := hook.Parse(doc).Cwd(); cwd != "" {
		return cwd
	}
	return os.Getenv("CLAUDE_PROJECT_DIR")
}

// resolvers are the two ways off resolves a place: this system's
// (realPath: the kernel's answer on Linux) and the walk that takes only a
// path free of links (realPathByLinks: macOS and the BSDs), tried here
// whatever the system.
var resolvers = []struct {
	name   string
	off    func(quiet.Rule, []byte, func(string) string) bool
	kernel bool // names a path through a link (Linux)
}{
	{"this system's", quiet.OffFor, runtime.GOOS == "linux"},
	{"by links", quiet.OffByLinks, false},
}

// throughLink reports whether a place of l, which the hook looks at, has a
// link on its way: where off without the kernel's answer leaves the
// decision to the hook.
func throughLink(l layout) bool {
	for _, p := range []string{l.projectDir, l.stateRoot, l.cwd, l.wd} {
		if strings.Contains(p, "link") {
			return true
		}
	}
	return false
}

// setUp makes l under base and returns the payload.
func setUp(t *testing.T, base string, l layout) []byte {
	t.Helper()
	for _, d := range []string{"w/a/b/c", "other"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	require.NoError(t, os.Symlink(filepath.Join(base, "w/a/b"), filepath.Join(base, "link")))
	require.NoError(t, os.Symlink("w/a", filepath.Join(base, "rel-link")))
	require.NoError(t, os.WriteFile(filepath.Join(base, "file"), nil, 0o644))
	doc := []byte(`{"version":2,"tasks":[]}`)
	if l.recorded != "" {
		dir := filepath.Join(base, l.recorded)
		tasks := filepath.Join(dir, root.TasksFile)
		require.NoError(t, os.WriteFile(tasks, doc, 0o644))
		require.NoError(t, record.Of(dir).SaveTasks(doc, true))
		if l.recordedGone {
			require.NoError(t, os.Remove(tasks))
		}
	}
	if l.tasks != "" {
		tasks := filepath.Join(base, l.tasks, root.TasksFile)
		os.Remove(tasks)
		if l.tasksLink {
			require.NoError(t, os.Symlink(filepath.Join(base, "nowhere"), tasks))
		} else {
			require.NoError(t, os.WriteFile(tasks, doc, 0o644))
		}
	}
	if l.marker != "" {
		require.NoError(t, os.WriteFile(filepath.Join(base, l.marker, root.ActiveMarker), nil, 0o644))
	}
	abs := func(p string) string {
		if p == "" || p == "-" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "rel:") {
			return strings.TrimPrefix(p, "rel:")
		}
		return filepath.Join(base, p)
	}
	for key, v := range map[string]string{"CLAUDE_PROJECT_DIR": l.projectDir, "HARNESS_STATE_ROOT": l.stateRoot} {
		if v == "-" {
			v = ""
		}
		t.Setenv(key, abs(v))
	}
	t.Chdir(abs(l.wd))
	payload := `{"session_id":"s","hook_event_name":"Stop"`
	if l.cwd != "" {
		payload += `,"cwd":` + strings.ReplaceAll(l.cwd, "BASE", base)
	}
	return []byte(payload + "}")
}

// Off ends a hook only where the hook itself would find nothing to act on:
// checked against the hooks' own lookups over many arrangements of roots,
// markers, records, links and environments, and it does end the hook in
// most of those where no root is to be found.
func TestOffOnlyWhereTheHookFindsNothing(t *testing.T) {
	dirs := []string{"", "w", "w/a", "w/a/b", "w/a/b/c", "other"}
	starts := []string{"-", "w/a/b/c", "link/c", "link/..", "link", "rel-link/b", "file", "missing", "rel:w", "rel:."}
	cwds := []string{"", `"BASE/w/a/b/c"`, `"BASE/link/c"`, `"BASE/link/.."`, `"BASE/rel-link"`, `"relative"`, `"/nonexistent"`,
		`"BASE\/w"`, `"BASE/file"`, `42`, `"BASE/other"`}
	wds := []string{"w/a/b/c", "link", "other", "."}
	rng := rand.New(rand.NewPCG(35, 1))
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	plain := 0       // cases with nothing of the harness about, every path absolute, a cwd without escapes
	plainNoLink := 0 // and no link on the way to any place
	for i := range 800 {
		l := layout{tasks: pick(dirs), marker: pick(dirs), recorded: pick(dirs), tasksLink: rng.IntN(8) == 0,
			recordedGone: rng.IntN(2) == 0, projectDir: pick(starts), stateRoot: pick(starts[:5]), cwd: pick(cwds), wd: pick(wds)}
		if rng.IntN(3) > 0 {
			l.recorded = "" // most machines know no project near here
		}
		if rng.IntN(3) == 0 {
			l.tasks, l.marker = "", "" // and most directories are no project
		}
		if rng.IntN(2) == 0 {
			l.stateRoot = "-"
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			t.Setenv("HARNESS_RECORD_DIR", filepath.Join(base, "records"))
			doc := setUp(t, base, l)
			nothing := l.tasks == "" && l.marker == "" && l.recorded == "" && !strings.HasPrefix(l.projectDir, "rel:") && !strings.Contains(l.cwd, `\`)
			if nothing {
				plain++
				if !throughLink(l) {
					plainNoLink++
				}
			}
			for _, r := range resolvers {
				for _, rule := range []quiet.Rule{quiet.Switched, quiet.Rooted, quiet.Known, quiet.Settled, quiet.Ended} {
					off := r.off(rule, doc, os.Getenv)
					assert.False(t, off && hookFinds(rule, doc), "%s: rule %d ended a hook that finds a project to act on: %+v, payload %s", r.name, rule, l, doc)
					if nothing && (r.kernel || !throughLink(l)) {
						assert.True(t, off, "%s: rule %d left a hook with nothing about to decide: %+v, payload %s", r.name, rule, l, doc)
					}
				}
			}
		})
	}
	assert.Greater(t, plain, 20, "too few cases without the harness to judge")
	assert.Greater(t, plainNoLink, 5, "too few cases without the harness or a link to judge")
}

// The cases a person meets, one by one.
func TestOff(t *testing.T) {
	tests := []struct {
		name string
		l    layout
		want [4]bool // Switched, Rooted, Known, Settled
	}{
		{"no harness anywhere", layout{projectDir: "w/a/b/c", cwd: `"BASE/w/a/b/c"`, wd: "w/a/b/c"}, [4]bool{true, true, true, true}},
		{"a project switched on above", layout{tasks: "w/a", marker: "w/a", projectDir: "w/a/b", cwd: `"BASE/w/a/b"`, wd: "w/a/b"}, [4]bool{false, false, false, false}},
		{"a project switched off", layout{tasks: "w/a", projectDir: "w/a", cwd: `"BASE/w/a"`, wd: "w/a"}, [4]bool{true, false, false, true}},
		// Its record still says on: the next session start settles it.
		{"a project just switched off", layout{tasks: "w/a", recorded: "w/a", projectDir: "w/a", cwd: `"BASE/w/a"`, wd: "w/a"}, [4]bool{true, false, false, false}},
		{"reached through a link", layout{tasks: "w/a/b", marker: "w/a/b", projectDir: "-", cwd: `"BASE/link/c"`, wd: "other"}, [4]bool{false, false, false, false}},
		// root.Find takes the link's ".." lexically, integrity.Root's look at
		// the record physically: both are looked at.
		{"a link's parent, both ways", layout{tasks: "w/a", marker: "w/a", projectDir: "-", cwd: `"BASE/link/.."`, wd: "other"}, [4]bool{false, false, false, false}},
		{"only the process is in the project", layout{tasks: "w", marker: "w", projectDir: "-", wd: "w/a/b/c"}, [4]bool{false, false, false, false}},
		{"the state root set", layout{tasks: "other", marker: "other", projectDir: "-", stateRoot: "other", wd: "w"}, [4]bool{false, false, false, false}},
		{"the state root set, switched off", layout{tasks: "other", projectDir: "-", stateRoot: "other", wd: "w"}, [4]bool{true, false, false, true}},
		{"a tasks file gone that the record knows", layout{recorded: "w/a", recordedGone: true, projectDir: "w/a/b", wd: "w/a/b"}, [4]bool{true, true, false, true}},
		{"a relative project directory", layout{projectDir: "rel:w", wd: "other"}, [4]bool{false, false, false, false}},
		{"a cwd with an escape", layout{projectDir: "-", cwd: `"BASE\/w"`, wd: "other"}, [4]bool{false, false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			t.Setenv("HARNESS_RECORD_DIR", filepath.Join(base, "records"))
			if tt.l.stateRoot == "" {
				tt.l.stateRoot = "-"
			}
			doc := setUp(t, base, tt.l)
			for _, r := range resolvers {
				assert.Equal(t, tt.want[1], r.off(quiet.Ended, doc, os.Getenv), "%s: Ended, with no judgement kept, as Rooted", r.name)
				for i, rule := range []quiet.Rule{quiet.Switched, quiet.Rooted, quiet.Known, quiet.Settled} {
					assert.Equal(t, tt.want[i], r.off(rule, doc, os.Getenv), "%s: rule %d", r.name, rule)
				}
			}
		})
	}
}

// The record's directory is found as record.Base finds it: from
// $XDG_STATE_HOME, else from $HOME.
func TestOffFindsTheRecordFromHome(t *testing.T) {
	for _, key := range []string{"XDG_STATE_HOME", "HOME"} {
		t.Run(key, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			t.Setenv("HARNESS_RECORD_DIR", "")
			t.Setenv("XDG_STATE_HOME", "")
			t.Setenv(key, filepath.Join(base, "home"))
			doc := setUp(t, base, layout{recorded: "w/a", recordedGone: true, projectDir: "w/a/b", stateRoot: "-", wd: "w/a/b"})
			require.NotEmpty(t, record.Base())
			assert.True(t, strings.HasPrefix(record.Base(), filepath.Join(base, "home")), record.Base())
			assert.False(t, quiet.OffFor(quiet.Known, doc, os.Getenv))
			assert.True(t, quiet.OffFor(quiet.Rooted, doc, os.Getenv))
		})
	}
}

// SessionStart and UserPromptSubmit end early in a project switched off
// only where there is nothing to settle: no marker, the record (if any)
// saying off, the runtime directory no link for root.OwnRuntimeDir to
// replace.
func TestSettledOff(t *testing.T) {
	tests := []struct {
		name string
		set  func(t *testing.T, dir string)
		want bool
	}{
		{"no record", func(*testing.T, string) {}, true},
		{"recorded off", func(t *testing.T, dir string) { record.Of(dir).SetActive(false) }, true},
		{"recorded off, a runtime directory", func(t *testing.T, dir string) {
			record.Of(dir).SetActive(false)
			require.NoError(t, os.Mkdir(filepath.Join(dir, root.RuntimeDir), 0o755))
		}, true},
		{"recorded on: switched off since", func(*testing.T, string) {}, false},
		{"switched on", func(t *testing.T, dir string) {
			record.Of(dir).SetActive(false)
			require.NoError(t, os.WriteFile(filepath.Join(dir, root.ActiveMarker), nil, 0o644))
		}, false},
		{"the runtime directory a link", func(t *testing.T, dir string) {
			record.Of(dir).SetActive(false)
			require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(dir, root.RuntimeDir)))
		}, false},
		{"a mark that cannot be read", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(record.Of(dir).MarkPath(), []byte(`{"active":fals`), 0o600))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			t.Setenv("HARNESS_RECORD_DIR", filepath.Join(base, "records"))
			t.Setenv("HARNESS_STATE_ROOT", "")
			t.Setenv("CLAUDE_PROJECT_DIR", base)
			t.Chdir(base)
			doc := []byte(`{"version":2,"tasks":[]}`)
			require.NoError(t, os.WriteFile(filepath.Join(base, root.TasksFile), doc, 0o644))
			if tt.name != "no record" {
				require.NoError(t, record.Of(base).SaveTasks(doc, true))
			}
			tt.set(t, base)
			payload := []byte(`{"session_id":"s","hook_event_name":"SessionStart","cwd":"` + base + `"}`)
			assert.Equal(t, tt.want, quiet.OffFor(quiet.Settled, payload, os.Getenv))
			assert.False(t, quiet.OffFor(quiet.Rooted, payload, os.Getenv))
		})
	}
}
