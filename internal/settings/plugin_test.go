package settings

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The repository is also a Claude Code plugin: .claude-plugin/plugin.json
// and hooks/hooks.json, running the executables scripts/build.sh puts in
// bin/. These tests keep the plugin, the build, install.sh and Hooks in step.

// TestBuildAndInstallAgree: scripts/build.sh and install.sh take their list
// of executables from scripts/programs.sh, which reads hooks/*/main.go, so
// every hook of Hooks needs its directory there.
func TestBuildAndInstallAgree(t *testing.T) {
	built := Executables(t)
	for _, h := range Hooks {
		assert.Contains(t, built, h.Program, "hooks/%s/main.go", strings.TrimPrefix(h.Program, "harness-"))
	}
	for _, script := range []string{"install.sh", filepath.Join("scripts", "build.sh")} {
		assert.Contains(t, read(t, filepath.Join(repoRoot(t), script)), "scripts/programs.sh", script+" sources the list")
	}
	cmd := exec.Command("bash", "-c", ". scripts/programs.sh && echo $programs")
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.ElementsMatch(t, built, strings.Fields(string(out)), "scripts/programs.sh")
}

// Executables lists the harness executables as scripts/programs.sh does:
// one per hooks/NAME/main.go, `harness` for hooks/harness and harness-NAME
// for the rest.
func Executables(t *testing.T) []string {
	t.Helper()
	mains, err := filepath.Glob(filepath.Join(repoRoot(t), "hooks", "*", "main.go"))
	require.NoError(t, err)
	var out []string
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		if name != "harness" {
			name = "harness-" + name
		}
		out = append(out, name)
	}
	require.NotEmpty(t, out)
	return out
}

func TestPluginManifest(t *testing.T) {
	repo := repoRoot(t)
	var manifest struct {
		Name        string          `json:"name"`
		Version     string          `json:"version"`
		Description string          `json:"description"`
		Skills      json.RawMessage `json:"skills"`
		Hooks       json.RawMessage `json:"hooks"`
	}
	data := read(t, filepath.Join(repo, ".claude-plugin", "plugin.json"))
	dec := json.NewDecoder(strings.NewReader(data))
	require.NoError(t, dec.Decode(&manifest))
	assert.Equal(t, "harness", manifest.Name)
	assert.Regexp(t, `^[0-9]+\.[0-9]+\.[0-9]+$`, manifest.Version)
	assert.NotEmpty(t, manifest.Description)
	// hooks/hooks.json is loaded by convention; naming it again in the
	// manifest would load it twice.
	assert.Nil(t, manifest.Hooks)

	var skills []string
	require.NoError(t, json.Unmarshal(manifest.Skills, &skills), "skills must be a list of folders")
	require.NotEmpty(t, skills)
	found := false
	for _, s := range skills {
		assert.True(t, strings.HasPrefix(s, "./"), "%s: plugin paths start with ./", s)
		if _, err := os.Stat(filepath.Join(repo, s, "harness", "SKILL.md")); err == nil {
			found = true
		}
	}
	assert.True(t, found, "no skills folder of %v holds harness/SKILL.md", skills)
}

func TestPluginHooks(t *testing.T) {
	var file struct {
		Description string `json:"description"`
		Hooks       map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	data := read(t, filepath.Join(repoRoot(t), "hooks", "hooks.json"))
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&file))
	assert.NotEmpty(t, file.Description)

	built := Executables(t)
	got := map[string]Hook{}
	for event, groups := range file.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				assert.Equal(t, "command", h.Type)
				// Every hook runs the executable in the plugin's bin/,
				// else the launcher, which first builds it.
				program := h.Command[strings.LastIndexByte(h.Command, ' ')+1:]
				assert.Equal(t, pluginCommand(program), h.Command)
				assert.Contains(t, built, program, "scripts/build.sh does not build %s", program)
				matcher := ""
				if g.Matcher != nil {
					matcher = *g.Matcher
				}
				_, dup := got[program]
				assert.False(t, dup, "%s registered twice", program)
				got[program] = Hook{Event: event, Matcher: matcher, Program: program, Timeout: h.Timeout}
			}
		}
	}
	// The plugin registers exactly what `harness hooks install` does.
	want := map[string]Hook{}
	for _, h := range Hooks {
		want[h.Program] = h
	}
	assert.Equal(t, want, got)
}

// pluginCommand is the plugin's command for a hook: the executable in bin/
// when it is there, with no process started before it (the shell's exec),
// else the launcher.
func pluginCommand(program string) string {
	exe := `"${CLAUDE_PLUGIN_ROOT}/bin/` + program + `"`
	return "test -x " + exe + " && exec " + exe + `; exec sh "${CLAUDE_PLUGIN_ROOT}/hooks/launch.sh" ` + program
}

// runPlugin runs args as Claude Code runs a plugin's hook: the plugin's
// root in the environment, with PATH path and the payload on stdin. It
// returns the stdout and the exit code.
func runPlugin(t *testing.T, root, path, payload string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = []string{"PATH=" + path, "CLAUDE_PLUGIN_ROOT=" + root}
	cmd.Stdin = strings.NewReader(payload)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err)
	return string(out), 0
}

// The command as Claude Code runs it (sh -c, the plugin's root in the
// environment): the executable where it is built, without a tool started
// on the way; the launcher's answer where it is not.
func TestPluginHookCommand(t *testing.T) {
	launcher := filepath.Join(repoRoot(t), "hooks", "launch.sh")
	run := func(t *testing.T, root, program, path string) (string, int) {
		return runPlugin(t, root, path, `{"hook_event_name":"SessionStart"}`, "sh", "-c", pluginCommand(program))
	}
	root, stubs := t.TempDir(), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "hooks"), 0o755))
	write(t, filepath.Join(root, "hooks", "launch.sh"), read(t, launcher), 0o755)
	started := filepath.Join(t.TempDir(), "started")
	for _, tool := range []string{"uname", "cat", "sed", "dirname", "pwd", "printf", "mkdir", "ls", "env"} {
		write(t, filepath.Join(stubs, tool), "#!/bin/sh\necho "+tool+" >>"+started+"\n", 0o755)
	}
	write(t, filepath.Join(root, "bin", "harness-stop"), "#!/bin/sh\nread -r line; echo \"ran with $line\"; exit 2\n", 0o755)
	out, code := run(t, root, "harness-stop", stubs)
	assert.Equal(t, "ran with {\"hook_event_name\":\"SessionStart\"}\n", out)
	assert.Equal(t, 2, code, "its exit code passes through")
	assert.NoFileExists(t, started, "a tool ran before the executable")

	// Not built, and no Go: the launcher answers.
	noGo := t.TempDir()
	for _, tool := range []string{"sh", "cat", "sed", "printf", "dirname"} {
		if p, err := exec.LookPath(tool); err == nil {
			os.Symlink(p, filepath.Join(noGo, tool))
		}
	}
	out, code = run(t, root, "harness-session-start", noGo)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "harness plugin: its executables are missing from "+root+"/bin")
}

// TestPluginLauncher: hooks/launch.sh execs the plugin's executable, and
// without one (and without Go to build it) answers quietly: one valid JSON
// systemMessage at SessionStart, nothing for other events, always exit 0.
func TestPluginLauncher(t *testing.T) {
	launcher := filepath.Join(repoRoot(t), "hooks", "launch.sh")
	run := func(t *testing.T, root, prog, path string) (string, int) {
		return runPlugin(t, root, path, `{"hook_event_name":"Stop"}`, "sh", launcher, prog)
	}
	// A PATH with the basic tools but no go.
	noGo := t.TempDir()
	for _, tool := range []string{"sh", "cat", "sed", "printf", "dirname", "mkdir", "sleep", "rmdir", "mv", "rm"} {
		if p, err := exec.LookPath(tool); err == nil {
			os.Symlink(p, filepath.Join(noGo, tool))
		}
	}

	t.Run("runs the executable", func(t *testing.T) {
		root := t.TempDir()
		write(t, filepath.Join(root, "bin", "harness-stop"), "#!/bin/sh\necho \"ran with $(cat)\"\nexit 3\n", 0o755)
		out, code := run(t, root, "harness-stop", noGo)
		assert.Equal(t, "ran with {\"hook_event_name\":\"Stop\"}\n", out)
		assert.Equal(t, 3, code, "its exit code passes through")
	})
	t.Run("runs a Windows build's executable", func(t *testing.T) {
		root := t.TempDir()
		write(t, filepath.Join(root, "bin", "harness-stop.exe"), "#!/bin/sh\necho \"exe ran with $(cat)\"\n", 0o755)
		out, code := run(t, root, "harness-stop", noGo)
		assert.Equal(t, "exe ran with {\"hook_event_name\":\"Stop\"}\n", out)
		assert.Equal(t, 0, code)
	})
	t.Run("starts no other process on the way", func(t *testing.T) {
		// Every process a hook call starts costs about a millisecond:
		// with the executable in place, the launcher needs no tool at all.
		root, stubs := t.TempDir(), t.TempDir()
		write(t, filepath.Join(root, "bin", "harness-stop"), "#!/bin/sh\nread -r line; echo \"ran with $line\"\n", 0o755)
		started := filepath.Join(t.TempDir(), "started")
		for _, tool := range []string{"uname", "cat", "sed", "dirname", "pwd", "printf", "test", "[", "mkdir", "ls", "expr", "basename", "env"} {
			write(t, filepath.Join(stubs, tool), "#!/bin/sh\necho "+tool+" >>"+started+"\n", 0o755)
		}
		out, code := run(t, root, "harness-stop", stubs)
		assert.Equal(t, "ran with {\"hook_event_name\":\"Stop\"}\n", out)
		assert.Equal(t, 0, code)
		assert.NoFileExists(t, started, "the launcher ran a tool")
	})
	t.Run("no executables, no go", func(t *testing.T) {
		root := t.TempDir()
		out, code := run(t, root, "harness-session-start", noGo)
		assert.Equal(t, 0, code)
		var msg map[string]string
		require.NoError(t, json.Unmarshal([]byte(out), &msg), out)
		assert.Contains(t, msg["systemMessage"], "harness plugin: its executables are missing from "+root+"/bin")
		out, code = run(t, root, "harness-pre-tool-use", noGo)
		assert.Equal(t, 0, code)
		assert.Empty(t, out, "told once, at SessionStart")
	})
}
