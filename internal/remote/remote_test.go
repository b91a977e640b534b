package remote

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/record"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// clone makes a bare repository and a repository with it as origin.
func clone(t *testing.T) (bare, dir string) {
	base := t.TempDir()
	bare, dir = filepath.Join(base, "remote.git"), filepath.Join(base, "m")
	gitIn(t, base, "init", "-q", "--bare", bare)
	require.NoError(t, os.Mkdir(dir, 0o755))
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "remote", "add", "origin", bare)
	return bare, dir
}

func TestPushIsCompareAndSwap(t *testing.T) {
	bare, dir := clone(t)
	c := Config{Remote: "origin", Machine: "m"}
	heads, err := c.Fetch(dir)
	require.NoError(t, err)
	assert.Equal(t, "", heads[StateRef], "no state on the remote yet")

	first, err := Commit(dir, "", map[string][]byte{TasksFile: []byte("{}\n")}, "first")
	require.NoError(t, err)
	require.NoError(t, c.Push(dir, Update{Ref: StateRef, New: first}))
	second, err := Commit(dir, first, map[string][]byte{LogFile("m"): []byte("a line\n")}, "second")
	require.NoError(t, err)
	third, err := Commit(dir, second, nil, "third")
	require.NoError(t, err)

	tests := []struct {
		name string
		ups  []Update
		want error
	}{
		{"a ref that must not exist yet does", []Update{{Ref: StateRef, New: second}}, ErrLost},
		{"a ref that moved", []Update{{Ref: StateRef, Old: second, New: third}}, ErrLost},
		{"one stale ref of two: neither moves", []Update{{Ref: StateRef, Old: first, New: second}, {Ref: "refs/heads/main", Old: first, New: first}}, ErrLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, c.Push(dir, tt.ups...), tt.want)
			assert.Equal(t, first, gitIn(t, bare, "rev-parse", StateRef))
		})
	}
	require.NoError(t, c.Push(dir, Update{Ref: StateRef, Old: first, New: second}))
	assert.Equal(t, second, gitIn(t, bare, "rev-parse", StateRef))
	assert.Equal(t, second, git.RefHead(dir, Track(StateRef)), "the local copy follows")

	data, ok := Read(dir, second, TasksFile)
	require.True(t, ok)
	assert.Equal(t, "{}\n", string(data), "kept from the parent, byte for byte")
	assert.ElementsMatch(t, []string{TasksFile, LogFile("m")}, Files(dir, second))

	// A task's ref beside it: one fetch brings both, and the trail lists
	// the changes of both, each with its ref.
	task, err := CommitFile(dir, "", TaskFile, []byte("{\"id\": \"task-001\"}\n"), "third: task")
	require.NoError(t, err)
	require.NoError(t, c.Push(dir, Update{Ref: TaskRef("task-001"), New: task}))
	gitIn(t, dir, "update-ref", "-d", Track(TaskRef("task-001")))
	_, err = c.Fetch(dir)
	require.NoError(t, err)
	head, tasks := Tracked(dir)
	assert.Equal(t, second, head)
	assert.Equal(t, map[string]string{"task-001": task}, tasks)
	got := ReadAll(dir, []string{task + ":" + TaskFile, second + ":" + TasksFile, second + ":nothing"})
	assert.Equal(t, []string{"{\"id\": \"task-001\"}\n", "{}\n", ""}, []string{string(got[0]), string(got[1]), string(got[2])})
	assert.Nil(t, got[2])

	changes, err := Changes(dir)
	require.NoError(t, err)
	require.Len(t, changes, 3)
	byRef := map[string][]string{}
	for _, ch := range changes {
		byRef[ch.Ref] = append(byRef[ch.Ref], ch.Subject)
	}
	assert.Equal(t, map[string][]string{StateRef: {"first", "second"}, TaskRef("task-001"): {"third: task"}}, byRef,
		"each ref's changes, in the order they were made")
}

func TestUnreachable(t *testing.T) {
	_, dir := clone(t)
	gitIn(t, dir, "remote", "set-url", "origin", filepath.Join(t.TempDir(), "gone.git"))
	c := Config{Remote: "origin", Machine: "m"}
	_, err := c.Fetch(dir)
	assert.ErrorIs(t, err, ErrUnreachable)
	commit, err := Commit(dir, "", map[string][]byte{TasksFile: []byte("{}\n")}, "x")
	require.NoError(t, err)
	err = c.Push(dir, Update{Ref: StateRef, New: commit})
	assert.ErrorIs(t, err, ErrUnreachable)
	assert.NotContains(t, err.Error(), "\n", "git's lines folded into one")
}

func TestConfig(t *testing.T) {
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	root := t.TempDir()
	_, ok := Load(root)
	assert.False(t, ok)
	require.NoError(t, Save(root, Config{Remote: "origin", Machine: "m1"}))
	c, ok := Load(root)
	require.True(t, ok)
	assert.Equal(t, Config{Remote: "origin", Machine: "m1"}, c)
	for name, ok := range map[string]bool{"m1": true, "build.host_2": true, "": false, "a/b": false, ".hidden": false, "a-b": false, strings.Repeat("x", 41): false} {
		assert.Equal(t, ok, ValidMachine(name) == "", name)
	}
}

func TestPushFailures(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, bare string)
		want  error
	}{
		{"the ref locked by another push on the server at that instant", func(t *testing.T, bare string) {
			require.NoError(t, os.MkdirAll(filepath.Join(bare, "refs", "harness"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(bare, "refs", "harness", "state.lock"), nil, 0o644))
		}, ErrLost},
		{"a server hook that declines", func(t *testing.T, bare string) {
			hook := filepath.Join(bare, "hooks", "pre-receive")
			require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\necho no harness refs here >&2\nexit 1\n"), 0o755))
		}, ErrRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bare, dir := clone(t)
			tt.setup(t, bare)
			commit, err := Commit(dir, "", map[string][]byte{TasksFile: []byte("{}\n")}, "x")
			require.NoError(t, err)
			err = Config{Remote: "origin", Machine: "m"}.Push(dir, Update{Ref: StateRef, New: commit})
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

// A clone's id is made once and kept: every command of the clone names
// the machine the same, and another clone gets another.
func TestCloneIDIsStableAndPerClone(t *testing.T) {
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	a, err := CloneID("/p/one")
	require.NoError(t, err)
	again, err := CloneID("/p/one")
	require.NoError(t, err)
	b, err := CloneID("/p/two")
	require.NoError(t, err)
	assert.Equal(t, a, again)
	assert.NotEqual(t, a, b)
	assert.Len(t, a, cloneIDLen)
	assert.Empty(t, ValidMachine(DefaultMachine(a)))
	assert.True(t, strings.HasSuffix(DefaultMachine(a), "."+a), DefaultMachine(a))

	// A file cut short is replaced, not trusted.
	p := filepath.Join(record.Dir("/p/three"), cloneName)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, []byte("ab"), 0o600))
	c, err := CloneID("/p/three")
	require.NoError(t, err)
	assert.Len(t, c, cloneIDLen)
}
