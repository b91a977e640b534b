package settings

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The skill folder is all that `npx skills add` copies: it must be found in
// this repository, be complete on its own, and stay short enough to be read
// at every session.

// skillsVersion is the `skills` CLI the discovery test runs; keep it in sync
// with .ci/install-node22.sh.
const skillsVersion = "1.7.4"

// frontmatter parses SKILL.md's frontmatter (our keys are one line each,
// their values plain or double-quoted) and returns it with the body.
func frontmatter(t *testing.T, doc string) (map[string]string, string) {
	t.Helper()
	rest, ok := strings.CutPrefix(doc, "---\n")
	require.True(t, ok, "SKILL.md must start with a --- line")
	head, body, ok := strings.Cut(rest, "\n---\n")
	require.True(t, ok, "SKILL.md frontmatter must end with a --- line")
	fm := map[string]string{}
	for _, line := range strings.Split(head, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		require.True(t, ok, "frontmatter line %q", line)
		if strings.HasPrefix(v, `"`) {
			var s string
			require.NoError(t, json.Unmarshal([]byte(v), &s), "%s: a double-quoted value", k)
			v = s
		}
		fm[k] = v
	}
	return fm, body
}

func TestSkill(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "skill", "harness")
	doc := read(t, filepath.Join(dir, "SKILL.md"))
	fm, body := frontmatter(t, doc)

	assert.Equal(t, "harness", fm["name"], "the name is the slash command and must match the folder")
	desc := fm["description"]
	assert.LessOrEqual(t, len(desc), 1024, "description limit of the Agent Skills format")
	for _, when := range []string{"/harness", "many subtasks", "context window", "harness-tasks.json", "resumes"} {
		assert.Contains(t, desc, when, "the description says when to use the skill")
	}
	assert.NotEmpty(t, fm["argument-hint"])

	assert.Contains(t, body, "$ARGUMENTS", "the request reaches the body")
	for _, verb := range []string{"init", "run", "status", "add"} {
		assert.Contains(t, body, "- `"+verb, "the body handles /harness %s", verb)
	}
	assert.Contains(t, body, "./install.sh", "the skill says how to install the binaries")
	v := strings.Split(goLine(t), ".")
	assert.Contains(t, body, "Go ≥ "+v[0]+"."+v[1], "the Go version the skill asks for is go.mod's")
	assert.Less(t, len(doc), 12_000, "SKILL.md is read at every session: keep details in reference/")

	// Every reference page is linked, every link resolves.
	linked := map[string]bool{}
	for _, m := range regexp.MustCompile(`reference/([a-z-]+\.md)`).FindAllStringSubmatch(body, -1) {
		linked[m[1]] = true
		assert.FileExists(t, filepath.Join(dir, "reference", m[1]))
	}
	pages, err := os.ReadDir(filepath.Join(dir, "reference"))
	require.NoError(t, err)
	for _, p := range pages {
		assert.True(t, linked[p.Name()], "reference/%s is not linked from SKILL.md", p.Name())
	}
}

// skipDirs are the folders npx skills does not search (its SKIP_DIRS).
var skipDirs = map[string]bool{"node_modules": true, ".git": true, "dist": true, "build": true, "__pycache__": true}

// Another skill folder in the repository would hide skill/harness from npx
// skills' discovery (or be installed beside it).
func TestRepositoryHoldsOneSkill(t *testing.T) {
	repo := repoRoot(t)
	var found []string
	filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && skipDirs[d.Name()] {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "SKILL.md" {
			rel, _ := filepath.Rel(repo, path)
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	assert.Equal(t, []string{"skill/harness/SKILL.md"}, found)
}

// node22 finds a node >= 22.20 for the skills CLI: $HARNESS_NODE22 (the
// node executable or its directory), the copy .ci/install-node22.sh makes,
// or node on PATH. It returns the directory holding node.
func node22(t *testing.T) string {
	t.Helper()
	var candidates []string
	if p := os.Getenv("HARNESS_NODE22"); p != "" {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			p = filepath.Join(p, "node")
		}
		candidates = append(candidates, p)
	}
	candidates = append(candidates, filepath.Join(repoRoot(t), ".ci", "node22", "node_modules", ".bin", "node"))
	if p, err := exec.LookPath("node"); err == nil {
		candidates = append(candidates, p)
	}
	for _, p := range candidates {
		out, err := exec.Command(p, "--version").Output()
		if err == nil && nodeAtLeast(strings.TrimSpace(string(out)), 22, 20) {
			return filepath.Dir(p)
		}
	}
	msg := "node >= 22.20 not found for the skills CLI: run .ci/install-node22.sh, or set HARNESS_NODE22 to a node 22 executable"
	if os.Getenv("HARNESS_E2E_REQUIRED") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func nodeAtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	return err1 == nil && err2 == nil && (ma > major || ma == major && mi >= minor)
}

// TestNpxSkillsAdd installs the skill from this repository with the real
// `npx skills add`, at project and at user scope, in a throw-away HOME, and
// checks that skill/harness arrived whole.
func TestNpxSkillsAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs npx; skipped with -short")
	}
	nodeDir := node22(t)
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("npx not found (apt-get install -y npm)")
	}
	repo := repoRoot(t)
	// The pinned CLI .ci/install-node22.sh installed, else the registry's.
	skills := []string{"--yes", "skills@" + skillsVersion}
	if prefix := filepath.Join(repo, ".ci", "node22"); exists(filepath.Join(prefix, "node_modules", "skills", "package.json")) {
		skills = []string{"--prefix", prefix, "--no-install", "skills"}
	}

	tests := []struct {
		name, flag string
		dest       func(home, project string) string
	}{
		{"project scope", "", func(_, project string) string { return filepath.Join(project, ".claude", "skills", "harness") }},
		{"user scope", "-g", func(home, _ string) string { return filepath.Join(home, ".claude", "skills", "harness") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, project := t.TempDir(), t.TempDir()
			args := append(append([]string{}, skills...), "add", repo, "-y", "--agent", "claude-code", "--json")
			if tt.flag != "" {
				args = append(args, tt.flag)
			}
			cmd := exec.Command(npx, args...)
			cmd.Dir = project
			cmd.Env = append(os.Environ(), "HOME="+home, "PATH="+nodeDir+string(os.PathListSeparator)+os.Getenv("PATH"),
				"DO_NOT_TRACK=1", "DISABLE_TELEMETRY=1", "npm_config_update_notifier=false", "NO_COLOR=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "npx %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), stdout.String(), stderr.String())

			var installed []struct {
				Name, Status, Path string
			}
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &installed), "stdout:\n%s", stdout.String())
			require.Len(t, installed, 1, "exactly one skill discovered: %s", stdout.String())
			assert.Equal(t, "harness", installed[0].Name)
			assert.Equal(t, "installed", installed[0].Status)

			dest := tt.dest(home, project)
			src := filepath.Join(repo, "skill", "harness")
			files := tree(t, src)
			assert.Equal(t, files, tree(t, dest))
			for _, f := range files {
				if !strings.HasSuffix(f, "/") {
					assert.Equal(t, read(t, filepath.Join(src, f)), read(t, filepath.Join(dest, f)), f)
				}
			}
		})
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
