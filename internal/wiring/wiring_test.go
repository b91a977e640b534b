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
	assert.Equal(t, []string{filepath.Join(real, "sub"), real}, Projects("", filepath.Join(repo, "sub"), ""))

	// A directory said to be resolved is taken as it is; the others
	// through the same link are resolved.
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(real, link))
	assert.Equal(t, []string{link}, Projects(link, link))
	assert.Equal(t, []string{filepath.Join(real, "sub"), real, link}, Projects(link, filepath.Join(link, "sub"), link))
}

// BenchmarkCheck is what Stop and SessionStart add to their work when the
// harness is installed and wired as installed: "read", the settings files
// read and the executables' stats compared with those already verified
// (none hashed); "kept", the verdict kept and every file it rests on
// stat'ed (a session's turn ends, nothing changed).
func BenchmarkCheck(b *testing.B) {
	for _, kept := range []bool{false, true} {
		name := "read"
		if kept {
			name = "kept"
		}
		b.Run(name, func(b *testing.B) {
			saved := racy
			racy = 0
			b.Cleanup(func() { racy = saved })
			where, _, _, _ := installed(b)
			if !kept {
				where.Verdict = ""
			}
			require.Empty(b, Check(where))
			for b.Loop() {
				if len(Check(where)) > 0 {
					b.Fatal("not wired")
				}
			}
		})
	}
}

// installed sets up a home with every harness hook registered from its
// install, as `harness install` leaves it, and returns the check of it
// with its verdict kept.
func installed(t testing.TB) (where Where, home, project, bin string) {
	home, project = t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	bin = DefaultBinDir()
	var programs []string
	for _, h := range settings.Hooks {
		programs = append(programs, h.Program)
	}
	programs = append(programs, "harness")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	for _, p := range programs {
		require.NoError(t, os.WriteFile(filepath.Join(bin, p), []byte(strings.Repeat(p, 1<<8)), 0o755))
	}
	require.NoError(t, WriteManifest(bin, programs))
	doc, _, err := settings.Register(nil, bin, "settings.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(home, ".claude", "settings.json"), doc, 0o644))
	rec := t.TempDir()
	return Where{Projects: []string{project}, BinDirs: []string{bin}, Verified: filepath.Join(rec, "verified"), Verdict: filepath.Join(rec, "verdict")}, home, project, bin
}

// The verdict kept with the stats of the files it rests on is the answer
// while none of them changed, and any change of one is looked at again.
// (Each change here changes a size or an inode: a change within the same
// tick of the clock is what racy guards, with the clock's own time.)
func TestCheckKeepsItsVerdict(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, home, project, bin string)
		want   string // a substring of the one problem found; "" none
	}{
		{"a settings file rewritten", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(home, ".claude", "settings.json"), `{"disableAllHooks": true}`)
		}, DisablesAll},
		{"a project's settings made", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(project, ".claude", "settings.local.json"), `{"disableAllHooks": true}`)
		}, DisablesAll},
		{"an executable replaced", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(bin, "harness-stop"), "fake")
		}, "harness-stop is not the executable"},
		{"an executable removed", func(t *testing.T, home, project, bin string) {
			require.NoError(t, os.Remove(filepath.Join(bin, "harness")))
		}, "harness is missing"},
		{"the registry names the settings, emptied", func(t *testing.T, home, project, bin string) {
			write(t, filepath.Join(bin, Registry), filepath.Join(home, ".claude", "settings.json")+"\n")
			write(t, filepath.Join(home, ".claude", "settings.json"), "{}")
		}, "are registered in none"},
		{"the manifest rewritten", func(t *testing.T, home, project, bin string) {
			data, err := os.ReadFile(filepath.Join(bin, Manifest))
			require.NoError(t, err)
			write(t, filepath.Join(bin, Manifest), strings.Replace(string(data), "  harness-stop\n", "  harness-stop\n0000000000000000000000000000000000000000000000000000000000000000  harness-stop-2\n", 1))
		}, "harness-stop-2 is missing"},
	}
	saved := racy
	racy = 0
	t.Cleanup(func() { racy = saved })
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			where, home, project, bin := installed(t)
			require.Empty(t, Check(where))
			file := where.verdictFile(where.key())
			kept, err := os.ReadFile(file)
			require.NoError(t, err, "the verdict is kept")
			assert.Contains(t, string(kept), filepath.Join(bin, "harness-stop")+"\t")

			// Kept: the answer, the files unread (a verdict changed by
			// hand shows it is the one returned).
			require.NoError(t, os.WriteFile(file, append(kept, "planted\n"...), 0o600))
			assert.Equal(t, []string{"planted"}, Check(where))

			tc.change(t, home, project, bin)
			got := Check(where)
			require.Len(t, got, 1, "%q", got)
			assert.Contains(t, got[0], tc.want)
			assert.Equal(t, got, Check(where), "the new verdict, kept")
		})
	}
}

// A file changed within racy of the check (the clock's tick may not have
// moved its times) leaves no verdict kept: the next check reads them all.
func TestCheckKeepsNoVerdictOnAFreshChange(t *testing.T) {
	where, _, _, _ := installed(t)
	require.Empty(t, Check(where))
	assert.NoFileExists(t, where.verdictFile(where.key()))
}

// Another place (a worker's work tree) keeps a verdict of its own: checks
// of the two in turn each find theirs.
func TestCheckKeepsAVerdictAPlace(t *testing.T) {
	saved := racy
	racy = 0
	t.Cleanup(func() { racy = saved })
	where, _, _, _ := installed(t)
	other := where
	other.Projects = []string{t.TempDir()}
	require.NotEqual(t, where.verdictFile(where.key()), other.verdictFile(other.key()))
	require.Empty(t, Check(where))
	require.Empty(t, Check(other))
	assert.FileExists(t, where.verdictFile(where.key()))
	assert.FileExists(t, other.verdictFile(other.key()))
}
