//go:build linux || darwin || freebsd || netbsd

package quiet_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/quiet"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/sessionhook"
	"github.com/harness-agent/harness/internal/state"
)

// The check after a tool call that finds nothing changed keeps its
// judgement (integrity.AfterTool), and the next PostToolUse of the session
// ends on it before its program is initialised; any move of a file the
// judgement rests on, another session, or a judgement not whole, and the
// hook runs whole again. Each case is a project of its own, all made
// first: a judgement is kept only for files unchanged for two seconds.
func TestAKeptJudgementEndsTheHookUntilAFileMoves(t *testing.T) {
	doc := []byte(`{"version":2,"tasks":[]}`)
	write := func(name, text string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
		}
	}
	remove := func(name string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, name))) }
	}
	tests := []struct {
		name   string
		active bool
		change func(t *testing.T, dir string)
		want   bool // the hook ends early after it
	}{
		{"nothing moved", true, func(*testing.T, string) {}, true},
		{"nothing moved, switched off", false, func(*testing.T, string) {}, true},
		{"the tasks file written again, the same bytes", true, write(root.TasksFile, string(doc)), false},
		{"the tasks file touched", true, func(t *testing.T, dir string) {
			now := time.Now()
			require.NoError(t, os.Chtimes(filepath.Join(dir, root.TasksFile), now, now))
		}, false},
		{"a backup made", true, write(state.BackupName, string(doc)), false},
		{"the marker removed", true, remove(root.ActiveMarker), false},
		{"the marker made", false, write(root.ActiveMarker, ""), false},
		{"paused", true, write(root.PausedFile, "now"), false},
		{"a line logged", true, write(root.ProgressFile, "[t] a line\n"), false},
		{"harness-init.sh made", true, write(root.InitScript, "#!/bin/sh\n"), false},
		{"the mark written again", true, func(t *testing.T, dir string) {
			mark := record.Of(dir).MarkPath()
			text, err := os.ReadFile(mark)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(mark, text, 0o600))
		}, false},
		{"the log's mirror written", true, func(t *testing.T, dir string) {
			log, err := os.ReadFile(filepath.Join(dir, root.ProgressFile))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(record.Dir(dir), record.LogMirror), log, 0o600))
		}, false},
		{"another session", true, func(t *testing.T, dir string) { t.Setenv("CLAUDE_CODE_SESSION_ID", "s2") }, false},
		{"a project nearer the session's directory", true, func(t *testing.T, dir string) {
			write("sub/"+root.TasksFile, string(doc))(t, dir)
			t.Setenv("CLAUDE_PROJECT_DIR", filepath.Join(dir, "sub"))
		}, false},
		{"the judgement cut short", true, func(t *testing.T, dir string) {
			file := filepath.Join(record.Dir(dir), quiet.JudgedFile)
			text, err := os.ReadFile(file)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(file, text[:len(text)-3], 0o600))
		}, false},
		{"the judgement gone", true, func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(record.Dir(dir), quiet.JudgedFile)))
		}, false},
	}
	records := filepath.Join(t.TempDir(), "records")
	t.Setenv("HARNESS_RECORD_DIR", records)
	t.Setenv("HARNESS_STATE_ROOT", "")
	t.Setenv("CLAUDE_CODE_SESSION_ID", "s1")
	dirs := make([]string, len(tests))
	for i, tt := range tests {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, root.TasksFile), doc, 0o644))
		require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
		require.NoError(t, record.Of(dir).SaveTasks(doc, tt.active))
		progress.Append(dir, progress.Entry{Session: 1, Type: progress.Init, Message: "set up"})
		if tt.active {
			require.NoError(t, os.WriteFile(filepath.Join(dir, root.ActiveMarker), nil, 0o644))
		}
		// The session's first check puts back the backup the record
		// expects and records that the session saw the marker.
		integrity.AfterTool(project.Open(dir), "a Bash call", nil)
		dirs[i] = dir
	}
	time.Sleep(2100 * time.Millisecond)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := dirs[i]
			t.Setenv("CLAUDE_PROJECT_DIR", dir)
			t.Chdir(dir)
			payload := []byte(`{"session_id":"s1","hook_event_name":"PostToolUse","cwd":"` + dir + `","tool_name":"Bash"}`)
			require.False(t, quiet.OffFor(quiet.Known, payload, os.Getenv), "ended before any judgement was kept")
			res := integrity.AfterTool(project.Open(dir), "a Bash call", nil)
			require.False(t, res.Tampered(), "%+v", res)
			require.FileExists(t, filepath.Join(record.Dir(dir), quiet.JudgedFile))
			require.True(t, quiet.OffFor(quiet.Known, payload, os.Getenv), "no early end on the judgement just kept")

			tt.change(t, dir)
			for _, r := range resolvers {
				assert.Equal(t, tt.want, r.off(quiet.Known, payload, os.Getenv), r.name)
			}
			for _, rule := range []quiet.Rule{quiet.Switched, quiet.Rooted} {
				assert.Equal(t, rule == quiet.Switched && !root.Active(dir), quiet.OffFor(rule, payload, os.Getenv),
					"a judgement kept is for the hooks after a tool call alone")
			}
		})
	}
}

// A judgement is kept only where nothing it rests on changed in the last
// two seconds: a stat taken within a tick of a write cannot tell a second
// write in the same tick from the first.
func TestNoJudgementKeptOnFilesJustChanged(t *testing.T) {
	t.Setenv("HARNESS_RECORD_DIR", filepath.Join(t.TempDir(), "records"))
	t.Setenv("CLAUDE_CODE_SESSION_ID", "s1")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	doc := []byte(`{"version":2,"tasks":[]}`)
	require.NoError(t, os.WriteFile(filepath.Join(dir, root.TasksFile), doc, 0o644))
	require.NoError(t, record.Of(dir).SaveTasks(doc, false))
	integrity.AfterTool(project.Open(dir), "a Bash call", nil) // puts back the backup the record expects
	res := integrity.AfterTool(project.Open(dir), "a Bash call", nil)
	require.False(t, res.Tampered(), "%+v", res)
	assert.NoFileExists(t, filepath.Join(record.Dir(dir), quiet.JudgedFile))
}

// A judgement ends a hook only in the state root the hook itself acts on
// (integrity.Root): over many arrangements of roots, links and
// environments, each with a judgement kept for one directory holding a
// tasks file, Off ends a hook that finds a root only where that directory
// is the root, and does so in many of them.
func TestAJudgementOnlyForTheHooksOwnRoot(t *testing.T) {
	dirs := []string{"", "w", "w/a", "w/a/b", "w/a/b/c", "other"}
	starts := []string{"-", "w/a/b/c", "link/c", "link/..", "link", "rel-link/b", "file", "missing", "w", "w/a"}
	cwds := []string{"", `"BASE/w/a/b/c"`, `"BASE/link/c"`, `"BASE/link/.."`, `"relative"`, `"BASE/file"`, `"BASE/other"`}
	wds := []string{"w/a/b/c", "link", "other", "."}
	rng := rand.New(rand.NewPCG(35, 2))
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	ended := 0
	for i := range 600 {
		l := layout{tasks: pick(dirs[1:]), marker: pick(dirs), tasksLink: rng.IntN(8) == 0,
			projectDir: pick(starts), stateRoot: pick(starts[:5]), cwd: pick(cwds), wd: pick(wds)}
		if rng.IntN(2) == 0 {
			l.stateRoot = "-"
		}
		second := pick(dirs) // another tasks file, nearer or farther
		judgedAt := l.tasks
		if second != "" && rng.IntN(2) == 0 {
			judgedAt = second
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			t.Setenv("HARNESS_RECORD_DIR", filepath.Join(base, "records"))
			t.Setenv("CLAUDE_CODE_SESSION_ID", "s1")
			doc := setUp(t, base, l)
			if second != "" {
				require.NoError(t, os.WriteFile(filepath.Join(base, second, root.TasksFile), []byte(`{"version":2,"tasks":[]}`), 0o644))
			}
			dir := filepath.Join(base, judgedAt)
			if fi, err := os.Lstat(filepath.Join(dir, root.TasksFile)); err != nil || !fi.Mode().IsRegular() {
				return // integrity.AfterTool keeps no judgement of a tasks file that is not a regular file
			}
			writeJudged(t, dir)

			if quiet.OffFor(quiet.Known, doc, os.Getenv) && hookFinds(quiet.Known, doc) {
				ended++
				assert.Equal(t, dir, integrity.Root(afterPlace(doc)), "ended on a judgement of another root than the hook's: %+v, payload %s", l, doc)
			}
		})
	}
	assert.Greater(t, ended, 50, "too few early ends to judge")
}

// The places where a tasks file is not the hook's root though Off looks
// there first: $CLAUDE_PROJECT_DIR's links resolved before its ".." (the
// hook cleans the path first), a parent past root.Find's 64, the parent
// of a cwd that is a file (the hook takes no such cwd, and looks from its
// own directory). A judgement kept there, or a project switched off and
// settled there, does not end the hook, whose root is elsewhere and
// switched on.
func TestARootElsewhereEndsNothing(t *testing.T) {
	deep := strings.Repeat("d/", 70)
	tests := []struct {
		name, at, projectDir, cwd, wd, hooks string
	}{
		{"the link's target's parent", "w/a", "link/..", `"BASE/other"`, "other", "other"},
		{"past root.Find's parents", "", deep, `"BASE/other"`, "other", "other"},
		{"a cwd that is a file", "", "", `"BASE/file"`, "w/a/b/c", "w/a/b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			t.Setenv("HARNESS_RECORD_DIR", filepath.Join(base, "records"))
			t.Setenv("CLAUDE_CODE_SESSION_ID", "s1")
			require.NoError(t, os.MkdirAll(filepath.Join(base, deep), 0o755))
			doc := setUp(t, base, layout{tasks: tt.hooks, marker: tt.hooks, stateRoot: "-", cwd: tt.cwd, wd: tt.wd})
			t.Setenv("CLAUDE_PROJECT_DIR", "")
			if tt.projectDir != "" {
				t.Setenv("CLAUDE_PROJECT_DIR", base+"/"+tt.projectDir) // as given: setUp's would be cleaned
			}
			dir := filepath.Join(base, tt.at)
			require.NoError(t, os.WriteFile(filepath.Join(dir, root.TasksFile), []byte(`{}`), 0o644))
			writeJudged(t, dir)
			hooks := filepath.Join(base, tt.hooks)
			require.Equal(t, hooks, integrity.Root(afterPlace(doc)))
			require.Equal(t, hooks, root.Find(hook.Parse(doc).Cwd()))
			assert.False(t, quiet.OffFor(quiet.Known, doc, os.Getenv), "a judgement of another root")
			assert.False(t, quiet.OffFor(quiet.Settled, doc, os.Getenv), "another root, switched off and settled")
		})
	}
}

// writeJudged keeps a judgement for the state root dir resting on its
// tasks file alone, as it is now.
func writeJudged(t *testing.T, dir string) {
	t.Helper()
	tasks := filepath.Join(dir, root.TasksFile)
	text := quiet.JudgedFormat + "\nroot " + dir + "\nsession s1\n" + tasks + "\t" + quiet.StatText(tasks) + "\n--\n"
	require.NoError(t, os.MkdirAll(record.Dir(dir), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(record.Dir(dir), quiet.JudgedFile), []byte(text), 0o600))
}

// At a turn's end in a project switched off, Stop ends before its packages
// are initialised where it has nothing to do: its check would find what
// the check after the last tool call of the session found (a judgement
// kept), the log is as the record last compared it whole, and the
// session's runtime asks for no reflection round. Each case is a project
// of its own, all made first: a judgement is kept only for files unchanged
// for two seconds.
func TestATurnEndWithNothingToDo(t *testing.T) {
	runtimeFile := func(text string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			path := sessionhook.RuntimePath(record.Of(dir), "s1")
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
			require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		}
	}
	logStamp := func(change int64) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			fi, err := os.Stat(filepath.Join(dir, root.ProgressFile))
			require.NoError(t, err)
			st := record.StampOf(fi)
			text := fmt.Sprintf("%020d %020d %020d %020d\n", st.Size+change, st.ModNs, st.Ino, st.CtimeNs)
			require.NoError(t, os.WriteFile(filepath.Join(record.Dir(dir), record.LogStampName), []byte(text), 0o600))
		}
	}
	tests := []struct {
		name    string
		active  bool
		judge   bool
		session string
		set     func(t *testing.T, dir string)
		want    bool
	}{
		{"nothing to do", false, true, "s1", func(*testing.T, string) {}, true},
		{"switched on", true, true, "s1", func(*testing.T, string) {}, false},
		{"no judgement kept", false, false, "s1", func(*testing.T, string) {}, false},
		{"the log as last compared", false, true, "s1", logStamp(0), true},
		{"the log written since it was compared", false, true, "s1", logStamp(1), false},
		{"a log stamp that does not read", false, true, "s1", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(record.Dir(dir), record.LogStampName), []byte("12 34\n"), 0o600))
		}, false},
		{"a runtime, the run not finished", false, true, "s1", runtimeFile(`{"session": 3}`), true},
		{"a finished run's reflection due", false, true, "s1", runtimeFile(`{"session": 3, "finished": true}`), false},
		{"a finished run's reflection done", false, true, "s1", runtimeFile(`{"session": 3, "finished": true, "reflect_done": true}`), true},
		{"a runtime that does not read", false, true, "s1", runtimeFile(`{"session": 3, "finished": tru`), false},
		{"a session id named by its hash", false, true, "s 1", func(*testing.T, string) {}, false},
		{"the runtime directory a link", false, true, "s1", func(t *testing.T, dir string) {
			require.NoError(t, os.RemoveAll(filepath.Join(dir, root.RuntimeDir)))
			require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(dir, root.RuntimeDir)))
		}, false},
	}
	t.Setenv("HARNESS_RECORD_DIR", filepath.Join(t.TempDir(), "records"))
	t.Setenv("HARNESS_STATE_ROOT", "")
	t.Setenv("CLAUDE_CODE_SESSION_ID", "s1")
	doc := []byte(`{"version":2,"tasks":[]}`)
	dirs := make([]string, len(tests))
	for i, tt := range tests {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, root.TasksFile), doc, 0o644))
		require.NoError(t, record.Of(dir).SaveTasks(doc, tt.active))
		progress.Append(dir, progress.Entry{Session: 1, Type: progress.Init, Message: "set up"})
		if tt.active {
			require.NoError(t, os.WriteFile(filepath.Join(dir, root.ActiveMarker), nil, 0o644))
		}
		integrity.AfterTool(project.Open(dir), "a Bash call", nil) // the backup, the session's first look
		dirs[i] = dir
	}
	time.Sleep(2100 * time.Millisecond)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := dirs[i]
			t.Setenv("CLAUDE_PROJECT_DIR", dir)
			t.Chdir(dir)
			if tt.judge {
				integrity.AfterTool(project.Open(dir), "a Bash call", nil)
				require.FileExists(t, filepath.Join(record.Dir(dir), quiet.JudgedFile))
			}
			tt.set(t, dir)
			payload := []byte(`{"session_id":"` + tt.session + `","hook_event_name":"Stop","cwd":"` + dir + `","stop_hook_active":false}`)
			for _, r := range resolvers {
				assert.Equal(t, tt.want, r.off(quiet.Ended, payload, os.Getenv), r.name)
			}
		})
	}
}
