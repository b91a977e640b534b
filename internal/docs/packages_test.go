package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPackageMapNamesEveryPackage: docs/architecture.md's package map has a
// row for every package under internal/, so a newcomer's map is whole.
func TestPackageMapNamesEveryPackage(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	var packages []string
	err = filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if goFiles, _ := filepath.Glob(filepath.Join(path, "*.go")); len(goFiles) > 0 {
			rel, err := filepath.Rel(root, path)
			require.NoError(t, err)
			packages = append(packages, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, packages)
	var rows []string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, line)
		}
	}
	for _, p := range packages {
		named := false
		for _, row := range rows {
			named = named || strings.Contains(row, "`"+p+"`")
		}
		assert.True(t, named, "docs/architecture.md's package map has no row for %s", p)
	}
}
