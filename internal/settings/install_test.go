package settings

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/testbin"
)

// These tests run the real install.sh, as a user would, in throw-away HOMEs.

// repoRoot is the directory holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "go.mod not found")
		dir = parent
	}
}

var (
	goEnvOnce sync.Once
	goEnvVars []string
)

// buildEnv is the environment of a run of install.sh in home: the real Go
// caches (a throw-away HOME would otherwise mean a cold build and a module
// download), Go's own config files kept out of home, and nothing else of the
// real HOME.
func buildEnv(t *testing.T, home string) []string {
	t.Helper()
	goEnvOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
		if err == nil {
			v := strings.Split(strings.TrimSpace(string(out)), "\n")
			goEnvVars = []string{"GOCACHE=" + v[0], "GOMODCACHE=" + v[1], "GOPATH=" + v[2]}
		}
	})
	var env []string
	for _, kv := range os.Environ() {
		k := strings.SplitN(kv, "=", 2)[0]
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "GOCACHE", "GOMODCACHE", "GOPATH", "HARNESS_STATE_ROOT":
			continue
		}
		if strings.HasPrefix(k, "CLAUDE") { // a person's shell, even when the test runs in a session
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, goEnvVars...), "HOME="+home, "XDG_CONFIG_HOME="+t.TempDir())
}

type result struct {
	code           int
	stdout, stderr string
}

// installSH runs install.sh with args in env.
func installSH(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return installSHIn(t, t.TempDir(), env, args...)
}

// installSHIn runs install.sh with args in env, in the directory dir.
func installSHIn(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(t), "install.sh"), args...)
	cmd.Env = env
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd = testbin.AsPerson(cmd) // install is a person's decision
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	t.Logf("install.sh %s → %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	return r
}

// tree lists the files under dir (relative, sorted), directories with a
// trailing slash.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	return out
}

// TestInstallScript is the whole life of an install, in one HOME whose
// settings.json is full of the user's own keys and hooks: dry run, install,
// re-install, project scope, uninstall of each. It builds the harness a few
// times (a couple of seconds each with a warm build cache).
func TestInstallScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the harness several times; skipped with -short")
	}
	t.Parallel()
	repo := repoRoot(t)
	home := t.TempDir()
	env := buildEnv(t, home)
	user := fixture(t, "full.json")
	settings := filepath.Join(home, ".claude", "settings.json")
	write(t, settings, string(user), 0o600)
	bin := filepath.Join(home, ".claude", "harness", "bin")
	skill := filepath.Join(home, ".claude", "skills", "harness")
	harness := filepath.Join(bin, "harness")

	t.Run("dry run changes nothing", func(t *testing.T) {
		r := installSH(t, env, "--dry-run")
		require.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, "would install "+bin+"/harness-stop\n")
		assert.Contains(t, r.stdout, "would copy "+repo+"/skill/harness to "+skill+"\n")
		assert.Contains(t, r.stdout, "+ PreToolUse         "+bin+"/harness-pre-tool-use")
		assert.Contains(t, r.stdout, "dry run: nothing was changed")
		assert.Equal(t, []string{".claude/", ".claude/settings.json"}, tree(t, home))
		assert.Equal(t, string(user), read(t, settings))
	})

	t.Run("install", func(t *testing.T) {
		r := installSH(t, env)
		require.Equal(t, 0, r.code)
		assert.Empty(t, r.stderr)
		for _, p := range Executables(t) {
			assert.True(t, executable(filepath.Join(bin, p)), p)
			// Built with the collector scripts/programs.sh chooses.
			x, err := testbin.Experiment(filepath.Join(bin, p))
			assert.NoError(t, err, p)
			assert.Equal(t, testbin.ShippedExperiment(), x, p)
		}
		for _, f := range tree(t, filepath.Join(repo, "skill", "harness")) {
			if !strings.HasSuffix(f, "/") {
				assert.Equal(t, read(t, filepath.Join(repo, "skill", "harness", f)), read(t, filepath.Join(skill, f)), f)
			}
		}
		assert.FileExists(t, filepath.Join(skill, ".installed-by-harness"))

		after := []byte(read(t, settings))
		assert.Equal(t, wantOurs(bin), ours(t, after))
		back, _, err := Unregister(after, settings)
		require.NoError(t, err)
		assert.Equal(t, string(user), string(back), "the user's settings are all there, byte for byte")
		assert.Equal(t, string(user), read(t, settings+BackupSuffix))
		assert.Equal(t, os.FileMode(0o600), fileMode(settings))

		status := exec.Command(harness, "hooks", "status")
		status.Env = env
		out, err := status.CombinedOutput()
		assert.NoError(t, err, "%s", out)
	})

	installed := read(t, settings)
	t.Run("install again changes nothing", func(t *testing.T) {
		r := installSH(t, env)
		require.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, "already registers all 12 hooks; nothing changed")
		assert.Equal(t, installed, read(t, settings), "byte-identical")
		assert.Equal(t, string(user), read(t, settings+BackupSuffix), "no new backup")
	})

	project := filepath.Join(t.TempDir(), "my project")
	require.NoError(t, os.MkdirAll(project, 0o755))
	t.Run("project scope", func(t *testing.T) {
		r := installSH(t, env, "--project", project)
		require.Equal(t, 0, r.code)
		doc := []byte(read(t, filepath.Join(project, ".claude", "settings.json")))
		assert.Equal(t, wantOurs(bin), ours(t, doc))
		assert.FileExists(t, filepath.Join(project, ".claude", "skills", "harness", "SKILL.md"))
		assert.Equal(t, installed, read(t, settings), "the user settings are not touched")
	})

	t.Run("uninstall project scope keeps what the user scope uses", func(t *testing.T) {
		r := installSH(t, env, "--uninstall", "--project", project)
		require.Equal(t, 0, r.code)
		// The install created the project's settings file and skill: none
		// of it stays behind as untracked files in the user's repository.
		assert.NoDirExists(t, filepath.Join(project, ".claude"))
		assert.Contains(t, r.stdout, "keeping the executables in "+bin+": the hooks in "+settings+" still use them")
		assert.FileExists(t, harness)
		assert.Equal(t, installed, read(t, settings))
	})

	t.Run("uninstall", func(t *testing.T) {
		r := installSH(t, env, "--uninstall")
		require.Equal(t, 0, r.code)
		assert.Equal(t, string(user), read(t, settings), "exactly our entries removed")
		assert.NoDirExists(t, filepath.Join(home, ".claude", "harness"))
		assert.NoDirExists(t, filepath.Join(home, ".claude", "skills"))
		assert.Equal(t, []string{".claude/", ".claude/settings.json", ".claude/settings.json.harness.bak"}, tree(t, home))
	})

	t.Run("a skill of the user's own is left alone", func(t *testing.T) {
		other := filepath.Join(home, ".claude", "skills", "harness", "SKILL.md")
		write(t, other, "---\nname: harness\ndescription: mine\n---\n", 0o644)
		r := installSH(t, env, "--uninstall")
		require.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, "install.sh did not put it there")
		assert.FileExists(t, other)
		require.NoError(t, os.RemoveAll(filepath.Join(home, ".claude", "skills")))
	})
}

// An invalid settings.json stops the install before anything is copied.
func TestInstallScriptRefusesInvalidSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the harness; skipped with -short")
	}
	t.Parallel()
	home := t.TempDir()
	settings := filepath.Join(home, ".claude", "settings.json")
	bad := "{\n  \"model\": \"opus\",\n}\n"
	write(t, settings, bad, 0o644)

	r := installSH(t, buildEnv(t, home))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "ERROR [CONFIG] "+settings+" is not valid JSON")
	assert.Contains(t, r.stderr, "install.sh: ERROR [CONFIG] "+settings+" cannot be used (above); nothing was installed")
	assert.Equal(t, bad, read(t, settings))
	assert.Equal(t, []string{".claude/", ".claude/settings.json"}, tree(t, home))
}

// Without a Go new enough for go.mod, install.sh says what to install in one
// line and does nothing else.
func TestInstallScriptNeedsGo(t *testing.T) {
	t.Parallel()
	want := goLine(t)
	fake := t.TempDir()
	write(t, filepath.Join(fake, "go"), "#!/bin/sh\nif [ \"$1 $2\" = 'env GOVERSION' ]; then echo go1.21.13; exit 0; fi\nexit 1\n", 0o755)
	noGo := t.TempDir()
	for _, tool := range []string{"bash", "env", "dirname", "awk", "sed", "mktemp", "rm", "cat"} {
		p, err := exec.LookPath(tool)
		require.NoError(t, err, tool)
		require.NoError(t, os.Symlink(p, filepath.Join(noGo, tool)))
	}
	tests := []struct {
		name, path, message string
	}{
		{"no go", noGo, "install.sh: ERROR [ENV_SETUP] Go not found: install Go " + want + " or newer (https://go.dev/dl/), then run ./install.sh again\n"},
		{"old go", fake + ":" + noGo, "install.sh: ERROR [ENV_SETUP] Go 1.21.13 is too old: install Go " + want + " or newer (https://go.dev/dl/), then run ./install.sh again\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			env := append(buildEnv(t, home), "PATH="+tt.path)
			for _, args := range [][]string{nil, {"--project", home}, {"--dry-run"}} {
				r := installSH(t, env, args...)
				assert.Equal(t, 2, r.code)
				assert.Equal(t, tt.message, r.stderr)
				assert.Empty(t, r.stdout)
				assert.Empty(t, tree(t, home))
			}
		})
	}
}

func TestInstallScriptUsage(t *testing.T) {
	t.Parallel()
	env := buildEnv(t, t.TempDir())
	r := installSH(t, env, "--help")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "usage: ./install.sh [--bin-dir DIR] [--project DIR] [--sandbox] [--dry-run] [--uninstall]")
	assert.Contains(t, r.stdout, "Needs Go "+goLine(t)+" or newer")

	r = installSH(t, env, "--frobnicate")
	assert.Equal(t, 2, r.code)
	assert.Equal(t, "install.sh: ERROR [USAGE] unknown argument --frobnicate\nhint: ./install.sh --help\n", r.stderr)

	if testing.Short() {
		return // the rest builds the harness first
	}
	r = installSH(t, env, "--project", "/no/such/dir")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "ERROR [CONFIG] --project /no/such/dir: no such directory")
}

// goLine is the version of go.mod's go line.
func goLine(t *testing.T) string {
	t.Helper()
	for _, l := range strings.Split(read(t, filepath.Join(repoRoot(t), "go.mod")), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("go.mod has no go line")
	return ""
}

// A different skill already at the skill's place is not overwritten.
func TestInstallScriptRefusesForeignSkill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the harness; skipped with -short")
	}
	t.Parallel()
	home := t.TempDir()
	foreign := filepath.Join(home, ".claude", "skills", "harness", "SKILL.md")
	write(t, foreign, "---\nname: harness-of-my-own\ndescription: mine\n---\n", 0o644)

	r := installSH(t, buildEnv(t, home))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "install.sh: ERROR [CONFIG] "+filepath.Dir(foreign)+" exists and is not the harness skill; nothing was installed\n")
	assert.Equal(t, []string{".claude/", ".claude/skills/", ".claude/skills/harness/", ".claude/skills/harness/SKILL.md"}, tree(t, home))
}

// hooksStatus runs `harness hooks status` of the harness in bin with args.
func hooksStatus(t *testing.T, env []string, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "harness"), append([]string{"hooks", "status"}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "%s", out)
	return string(out)
}

// Moving the bin directory takes the executables out of the old one, and
// the uninstall removes them from where the hooks ran, not from the default
// place (once they were left in ~/.claude/harness/bin and in the new place).
// The settings file the install created goes too: nothing is left.
func TestInstallScriptMovedBinDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the harness; skipped with -short")
	}
	t.Parallel()
	home := t.TempDir()
	env := buildEnv(t, home)
	old := filepath.Join(home, ".claude", "harness", "bin")
	moved := filepath.Join(home, "newbin")

	require.Equal(t, 0, installSH(t, env).code)
	assert.FileExists(t, filepath.Join(old, "harness-stop"))

	r := installSH(t, env, "--bin-dir", moved)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "~ Stop               "+moved+"/harness-stop (was "+old+"/harness-stop)")
	assert.Contains(t, r.stdout, "removing the executables from "+old+"\n")
	assert.NoDirExists(t, filepath.Join(home, ".claude", "harness"), "the old bin directory went with its executables")
	for _, p := range Executables(t) {
		assert.True(t, executable(filepath.Join(moved, p)), p)
	}
	hooksStatus(t, env, moved, "--bin-dir", moved)
	assert.NoFileExists(t, filepath.Join(home, ".claude", "settings.json"+BackupSuffix), "a file the harness created gets no backup")

	r = installSH(t, env, "--uninstall")
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "removing the executables from "+moved+"\n")
	assert.Empty(t, tree(t, home), "nothing left: no executables, no skill, no {} settings, no backup")
}

// An empty settings.json is read as {}: the install registers the hooks in
// it (keeping the empty file as the backup), the uninstall leaves {}.
func TestInstallScriptEmptySettings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the harness; skipped with -short")
	}
	t.Parallel()
	home := t.TempDir()
	env := buildEnv(t, home)
	settings := filepath.Join(home, ".claude", "settings.json")
	bin := filepath.Join(home, ".claude", "harness", "bin")
	write(t, settings, "", 0o644)

	r := installSH(t, env)
	require.Equal(t, 0, r.code)
	assert.Equal(t, wantOurs(bin), ours(t, []byte(read(t, settings))))
	assert.Equal(t, "", read(t, settings+BackupSuffix))
	hooksStatus(t, env, bin)

	r = installSH(t, env, "--uninstall")
	require.Equal(t, 0, r.code)
	assert.Equal(t, "{}\n", read(t, settings))
	assert.Equal(t, []string{".claude/", ".claude/settings.json", ".claude/settings.json.harness.bak"}, tree(t, home))
}

// A relative --bin-dir is made absolute and clean, as the hook commands are
// written, so uninstalling a project still sees that the user settings run
// hooks from the same directory (once `$H/./nb` missed `$H/nb` and the
// executables went while the user's hooks still ran them).
func TestInstallScriptRelativeBinDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the harness twice; skipped with -short")
	}
	t.Parallel()
	home := t.TempDir()
	env := buildEnv(t, home)
	project := filepath.Join(home, "proj")
	require.NoError(t, os.MkdirAll(project, 0o755))
	bin := filepath.Join(home, "nb")
	settings := filepath.Join(home, ".claude", "settings.json")

	r := installSHIn(t, home, env, "--bin-dir", "./nb")
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "installing the executables in "+bin+"\n")
	assert.Equal(t, wantOurs(bin), ours(t, []byte(read(t, settings))))
	require.Equal(t, 0, installSHIn(t, project, env, "--bin-dir", "../nb/.", "--project", ".").code)

	r = installSHIn(t, home, env, "--uninstall", "--project", "proj", "--bin-dir", "./nb")
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "keeping the executables in "+bin+": the hooks in "+settings+" still use them")
	assert.NoDirExists(t, filepath.Join(project, ".claude"), "the project's settings and skill were all ours")
	hooksStatus(t, env, bin, "--bin-dir", bin)

	r = installSHIn(t, home, env, "--uninstall", "--bin-dir", "nb/")
	require.Equal(t, 0, r.code)
	assert.NoDirExists(t, bin)
	assert.Equal(t, []string{"proj/"}, tree(t, home))
}

// A harness skill install.sh did not put there (an npx skills copy, or the
// user's own) is left as it is, with a message, at install and uninstall.
func TestInstallScriptKeepsSkillItDidNotInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the harness; skipped with -short")
	}
	t.Parallel()
	home := t.TempDir()
	env := buildEnv(t, home)
	skill := filepath.Join(home, ".claude", "skills", "harness")
	mine := "---\nname: harness\ndescription: my own older copy\n---\nmine\n"
	write(t, filepath.Join(skill, "SKILL.md"), mine, 0o644)

	r := installSH(t, env)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "leaving the skill in "+skill+" as it is: install.sh did not put it there (an npx skills copy, or your own), and it differs from this version's skill/harness; to use this one, remove it (npx skills remove harness, or by hand) and run ./install.sh again\n")
	assert.Equal(t, mine, read(t, filepath.Join(skill, "SKILL.md")))
	assert.Equal(t, []string{"SKILL.md"}, tree(t, skill))

	r = installSH(t, env, "--uninstall")
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "leaving "+skill+": install.sh did not put it there")
	assert.Equal(t, mine, read(t, filepath.Join(skill, "SKILL.md")))
}

// A directory that cannot be written stops the install before anything is
// copied; a failure after the copying began undoes this run's changes. Either
// way: one ERROR line, exit 2, everything as it was.
func TestInstallScriptNothingHalfDone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the harness; skipped with -short")
	}
	t.Parallel()
	t.Run("not writable", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		write(t, filepath.Join(home, ".claude", "skills"), "x\n", 0o644)
		r := installSH(t, buildEnv(t, home))
		assert.Equal(t, 2, r.code)
		skills := filepath.Join(home, ".claude", "skills")
		assert.Equal(t, "install.sh: ERROR [ENV_SETUP] cannot install the skill in "+skills+": "+skills+" is not a directory; nothing was installed\n"+
			"hint: fix that (or choose another --bin-dir or --project), then run ./install.sh again\n", r.stderr)
		assert.Equal(t, "install.sh: building the harness (scripts/build.sh)\n", r.stdout, "it stops before anything is installed")
		assert.Equal(t, []string{".claude/", ".claude/skills"}, tree(t, home))
	})
	t.Run("failure after copying", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		env := buildEnv(t, home)
		settings := filepath.Join(home, ".claude", "settings.json")
		write(t, settings, `{"model": "opus"}`, 0o644)
		// The bin directory's registry is a directory: writing it fails
		// after the executables and the skill were copied.
		registry := filepath.Join(home, ".claude", "harness", "bin", ".harness-installs")
		require.NoError(t, os.MkdirAll(registry, 0o755))
		before := tree(t, home)

		r := installSH(t, env)
		assert.Equal(t, 2, r.code)
		assert.Contains(t, r.stdout, "installing the skill in")
		assert.Regexp(t, "(?m)^install.sh: ERROR \\[ENV_SETUP\\] registering the hooks in "+settings+": .*is a directory; install.sh undid its changes, everything is as it was before$", r.stderr)
		assert.Equal(t, 1, strings.Count(r.stderr, "ERROR"), "one ERROR line")
		assert.Equal(t, before, tree(t, home))
		assert.Equal(t, `{"model": "opus"}`, read(t, settings))
	})
}
