package programs

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
