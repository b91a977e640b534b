package settings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The repository is also a Claude Code plugin: .claude-plugin/plugin.json
// and hooks/hooks.json, running the executables scripts/build.sh puts in
// bin/. These tests keep the plugin, the build, install.sh and Hooks in step.

// builtPrograms lists the executables scripts/build.sh produces, read from
// the script itself.
func builtPrograms(t *testing.T) []string {
	t.Helper()
	script := read(t, filepath.Join(repoRoot(t), "scripts", "build.sh"))
	var out []string
	for _, m := range regexp.MustCompile(`-o "\$out/([a-z-]+)"`).FindAllStringSubmatch(script, -1) {
		if !strings.Contains(m[1], "$") {
			out = append(out, m[1])
		}
	}
	loop := regexp.MustCompile(`for hook in ([a-z -]+); do`).FindStringSubmatch(script)
	require.NotNil(t, loop, "scripts/build.sh: the `for hook in …` loop is gone; update this test")
	require.Contains(t, script, `-o "$out/harness-$hook"`)
	for _, h := range strings.Fields(loop[1]) {
		out = append(out, "harness-"+h)
	}
	return out
}

func TestBuildAndInstallAgree(t *testing.T) {
	built := builtPrograms(t)
	assert.ElementsMatch(t, programs, built, "scripts/build.sh")
	for _, h := range Hooks {
		assert.Contains(t, built, h.Program)
	}
	m := regexp.MustCompile(`(?m)^programs="([^"]+)"$`).FindStringSubmatch(read(t, filepath.Join(repoRoot(t), "install.sh")))
	require.NotNil(t, m, "install.sh: programs=\"…\" line")
	assert.ElementsMatch(t, built, strings.Fields(m[1]), "install.sh installs what build.sh builds")
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

	built := builtPrograms(t)
	got := map[string]Hook{}
	for event, groups := range file.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				assert.Equal(t, "command", h.Type)
				assert.Regexp(t, `^"\$\{CLAUDE_PLUGIN_ROOT\}/bin/[a-z-]+"$`, h.Command, "quoted, under the plugin's bin/")
				program := Program(h.Command)
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
