package programs

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/quiet"
)

// TestMainsMatchHooksDirs: every executable scripts/programs.sh lists (one per
// hooks/NAME/main.go) has its entry point in Mains, and nothing else does, so
// the scenarios run exactly what the build ships.
func TestMainsMatchHooksDirs(t *testing.T) {
	mains, err := filepath.Glob(filepath.Join("..", "..", "hooks", "*", "main.go"))
	require.NoError(t, err)
	var dirs []string
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		if name != "harness" {
			name = "harness-" + name
		}
		dirs = append(dirs, name)
	}
	require.NotEmpty(t, dirs)
	var names []string
	for name := range Mains {
		names = append(names, name)
	}
	assert.ElementsMatch(t, dirs, names, "hooks/*/main.go against Mains")
}

// TestMainsImportTheirRule: each hook's main imports the rule of
// internal/quiet that Hooks gives it, the one the scenarios run, and
// exactly one; the harness command imports none.
func TestMainsImportTheirRule(t *testing.T) {
	byName := map[string]quiet.Rule{"switched": quiet.Switched, "rooted": quiet.Rooted, "known": quiet.Known,
		"settled": quiet.Settled, "ended": quiet.Ended}
	imports := regexp.MustCompile(`"github.com/harness-agent/harness/internal/quiet/(\w+)"`)
	mains, err := filepath.Glob(filepath.Join("..", "..", "hooks", "*", "main.go"))
	require.NoError(t, err)
	for _, m := range mains {
		src, err := os.ReadFile(m)
		require.NoError(t, err)
		found := imports.FindAllStringSubmatch(string(src), -1)
		name := "harness-" + filepath.Base(filepath.Dir(m))
		if name == "harness-harness" {
			assert.Empty(t, found, "the harness command ends early nowhere")
			continue
		}
		require.Len(t, found, 1, "%s imports one rule of internal/quiet", m)
		rule, known := byName[found[0][1]]
		require.True(t, known, "%s: internal/quiet/%s", m, found[0][1])
		h, listed := Hooks[name]
		require.True(t, listed, "Hooks has no %s", name)
		assert.Equal(t, h.Rule, rule, "%s imports internal/quiet/%s", m, found[0][1])
	}
	assert.Len(t, Hooks, len(mains)-1)
}
