package wiring

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/settings"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o755))
}

func TestManifestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "harness"), "one")
	write(t, filepath.Join(dir, "harness-stop"), "two")
	require.NoError(t, WriteManifest(dir, []string{"harness", "harness-stop"}))

	text, err := os.ReadFile(filepath.Join(dir, Manifest))
	require.NoError(t, err)
	want := sha256.Sum256([]byte("one"))
	assert.True(t, strings.HasPrefix(string(text), hex.EncodeToString(want[:])+"  harness\n"), "sha256sum's format: %s", text)

	sums, names, ok := ReadManifest(dir)
	require.True(t, ok)
	assert.Equal(t, []string{"harness", "harness-stop"}, names)
	assert.Equal(t, hex.EncodeToString(want[:]), sums["harness"])
	assert.True(t, IsInstallDir(dir))
	assert.False(t, IsInstallDir(t.TempDir()))

	require.Error(t, WriteManifest(dir, []string{"missing"}), "a program that is not there")
}

// registered is a settings document registering every harness hook from
// bin, as `harness install` writes it.
func registered(t *testing.T, bin string) string {
	doc, _, err := settings.Register(nil, bin, "settings.json")
	require.NoError(t, err)
	return string(doc)
}

func TestCheck(t *testing.T) {
	const allMissing = "the harness hooks SessionStart, PreToolUse, Stop, SubagentStop, TeammateIdle, SessionEnd, UserPromptSubmit, PostToolUse, PostToolUseFailure, PreCompact, StopFailure, ConfigChange are registered in none"
	cases := []struct {
		name  string
		setup func(t *testing.T, home, project, bin string)
		want  []string // substrings, one per problem, in order
	}{
		{"nothing installed", func(t *testing.T, home, project, bin string) {}, nil},
		{"every hook registered", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(home, ".claude", "settings.json"), registered(t, bin))
		}, nil},
		{"registered from the project's settings", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(project, ".claude", "settings.json"), registered(t, bin))
			write(t, filepath.Join(bin, Registry), filepath.Join(home, ".claude", "settings.json")+"\n")
		}, nil},
		{"some hooks removed by hand", func(t *testing.T, home, project, bin string) {
			doc := registered(t, bin)
			doc = strings.Replace(doc, "harness-pre-tool-use", "my-linter", 1)
			write(t, filepath.Join(home, ".claude", "settings.json"), doc)
		}, []string{"the harness hooks PreToolUse are registered in none"}},
		{"settings emptied under an install", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(home, ".claude", "settings.json"), "{}")
			write(t, filepath.Join(bin, Registry), filepath.Join(home, ".claude", "settings.json")+"\n")
		}, []string{allMissing}},
		{"settings made unreadable under an install", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(home, ".claude", "settings.json"), registered(t, bin)+"}")
			write(t, filepath.Join(bin, Registry), filepath.Join(home, ".claude", "settings.json")+"\n")
		}, []string{allMissing}},
		{"an install for another project", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(bin, Registry), "/elsewhere/.claude/settings.json\n")
		}, nil},
		{"disableAllHooks in the local settings", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(home, ".claude", "settings.json"), registered(t, bin))
			write(t, filepath.Join(project, ".claude", "settings.local.json"), `{"disableAllHooks": true}`)
		}, []string{`settings.local.json sets "disableAllHooks": true`}},
		{"disableAllHooks false", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(home, ".claude", "settings.json"), `{"disableAllHooks": false}`)
		}, nil},
		{"an executable replaced", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(home, ".claude", "settings.json"), registered(t, bin))
			write(t, filepath.Join(bin, "harness-stop"), "fake")
		}, []string{"harness-stop is not the executable `harness install` put there"}},
		{"an executable removed", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(home, ".claude", "settings.json"), registered(t, bin))
			require.NoError(t, os.Remove(filepath.Join(bin, "harness")))
		}, []string{"harness is missing (the install's manifest"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home, project := t.TempDir(), t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("CLAUDE_CONFIG_DIR", "")
			bin := filepath.Join(home, ".claude", "harness", "bin")
			programs := []string{"harness", "harness-stop"}
			for _, p := range programs {
				write(t, filepath.Join(bin, p), "real "+p)
			}
			require.NoError(t, WriteManifest(bin, programs))
			tc.setup(t, home, project, bin)

			got := Check(Where{Projects: []string{project}, BinDirs: []string{DefaultBinDir()}})
			require.Len(t, got, len(tc.want), "%q", got)
			for i, w := range tc.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

func TestCheckVerifiedKeepsStats(t *testing.T) {
	bin, cache := t.TempDir(), filepath.Join(t.TempDir(), "verified")
	write(t, filepath.Join(bin, "harness"), "real")
	require.NoError(t, WriteManifest(bin, []string{"harness"}))
	where := Where{BinDirs: []string{bin}, Verified: cache}

	assert.Empty(t, Check(where))
	kept, err := os.ReadFile(cache)
	require.NoError(t, err)
	assert.Contains(t, string(kept), filepath.Join(bin, "harness")+"\t")

	// Rewritten with the same bytes: its stat changed, it is hashed again
	// and still matches.
	write(t, filepath.Join(bin, "harness"), "real")
	assert.Empty(t, Check(where))
	// Replaced: found, and no longer counted as verified.
	write(t, filepath.Join(bin, "harness"), "fake")
	assert.Len(t, Check(where), 1)
	kept, err = os.ReadFile(cache)
	require.NoError(t, err)
	assert.NotContains(t, string(kept), filepath.Join(bin, "harness")+"\t")
}

func TestFresh(t *testing.T) {
	seen := filepath.Join(t.TempDir(), "rec", "seen")
	steps := []struct {
		problems []string
		fresh    bool
	}{
		{nil, false},
		{[]string{"a"}, true},
		{[]string{"a"}, false},
		{[]string{"a", "b"}, true},
		{nil, false},
		{[]string{"a"}, true}, // back after it was gone: told again
	}
	for i, s := range steps {
		assert.Equal(t, s.fresh, Fresh(s.problems, seen), "step %d: %q", i, s.problems)
	}
}

func TestPlaces(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "/cfg")
	files := SettingsFiles("/p", "", "/p")
	assert.Equal(t, "/cfg/settings.json", files[0])
	assert.Contains(t, files, filepath.Join(home, ".claude", "settings.json"))
	assert.Contains(t, files, "/p/.claude/settings.json")
	assert.Contains(t, files, "/p/.claude/settings.local.json")
	assert.Len(t, SkillDirs("/p"), 3)

	repo := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "sub"), 0o755))
	real, _ := filepath.EvalSymlinks(repo)
	assert.Equal(t, []string{filepath.Join(real, "sub"), real}, Projects(filepath.Join(repo, "sub"), ""))
}

// BenchmarkCheck is what Stop and SessionStart add to their work when the
// harness is installed and wired as installed: the settings files read,
// the executables' stats compared with those already verified (none
// hashed).
func BenchmarkCheck(b *testing.B) {
	home, project := b.TempDir(), b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("CLAUDE_CONFIG_DIR", "")
	bin := DefaultBinDir()
	var programs []string
	for _, h := range settings.Hooks {
		programs = append(programs, h.Program)
	}
	programs = append(programs, "harness")
	for _, p := range programs {
		require.NoError(b, os.MkdirAll(bin, 0o755))
		require.NoError(b, os.WriteFile(filepath.Join(bin, p), []byte(strings.Repeat(p, 1<<8)), 0o755))
	}
	require.NoError(b, WriteManifest(bin, programs))
	doc, _, err := settings.Register(nil, bin, "settings.json")
	require.NoError(b, err)
	require.NoError(b, os.WriteFile(filepath.Join(home, ".claude", "settings.json"), doc, 0o644))
	where := Where{Projects: []string{project}, BinDirs: []string{bin}, Verified: filepath.Join(b.TempDir(), "verified")}
	require.Empty(b, Check(where))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(Check(where)) > 0 {
			b.Fatal("not wired")
		}
	}
}
