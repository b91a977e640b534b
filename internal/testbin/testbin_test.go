package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every executable is there under its installed name, and a second build
// of the same sources hands out the same files (links to the shared cache),
// not a new build.
func TestBuildShared(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the executables")
	}
	first, second := Build(t), Build(t)
	root, err := RepoRoot()
	require.NoError(t, err)
	mains, err := filepath.Glob(filepath.Join(root, "hooks", "*", "main.go"))
	require.NoError(t, err)
	require.NotEmpty(t, mains)
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		if name != "harness" {
			name = "harness-" + name
		}
		a, err := os.Stat(filepath.Join(first, name))
		require.NoError(t, err, name)
		b, err := os.Stat(filepath.Join(second, name))
		require.NoError(t, err, name)
		assert.True(t, os.SameFile(a, b), "%s: built twice", name)
	}
	out, err := exec.Command(filepath.Join(first, "harness"), "version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.True(t, strings.HasPrefix(string(out), "harness "), "%s", out)
}

// A test that points HOME at a scratch directory (taskcycle's TestMain
// does) still builds with the Go caches the test binary started with: an
// empty build cache under the scratch HOME meant a build from scratch and
// the modules downloaded again, every run.
func TestBuildKeepsTheGoCaches(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the executables")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	Build(t)
	assert.NoDirExists(t, filepath.Join(home, ".cache"), "go build used a build cache in the scratch HOME")
	assert.NoDirExists(t, filepath.Join(home, "go"), "go build used a module cache in the scratch HOME")
}

// The tests run the executables with the collector scripts/build.sh
// builds them with (scripts/programs.sh).
func TestBuildUsesTheShippedCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the executables")
	}
	dir := Build(t)
	for _, name := range []string{"harness", "harness-stop", "harness-pre-tool-use"} {
		got, err := Experiment(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, ShippedExperiment(), got, name)
	}
}
