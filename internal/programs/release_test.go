package programs

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReleaseScript runs scripts/release.sh for every platform and checks
// that each archive holds every executable (with .exe on Windows), the
// skill, LICENSE and README.md, and that SHA256SUMS verifies.
func TestReleaseScript(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles every executable for five platforms")
	}
	t.Parallel()
	out := t.TempDir()
	cmd := exec.Command(filepath.Join("..", "..", "scripts", "release.sh"), "0.0.0-test", out)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, string(b))

	sums := exec.Command("sha256sum", "-c", "SHA256SUMS")
	sums.Dir = out
	b, err = sums.CombinedOutput()
	require.NoError(t, err, string(b))

	for _, platform := range []string{"linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64", "windows-amd64"} {
		name := "harness-0.0.0-test-" + platform
		ext := ""
		var files []string
		if strings.HasPrefix(platform, "windows") {
			ext = ".exe"
			z, err := zip.OpenReader(filepath.Join(out, name+".zip"))
			require.NoError(t, err)
			for _, f := range z.File {
				files = append(files, strings.TrimSuffix(f.Name, "/"))
			}
			z.Close()
		} else {
			f, err := os.Open(filepath.Join(out, name+".tar.gz"))
			require.NoError(t, err)
			gz, err := gzip.NewReader(f)
			require.NoError(t, err)
			tr := tar.NewReader(gz)
			for h, err := tr.Next(); err == nil; h, err = tr.Next() {
				files = append(files, strings.TrimSuffix(h.Name, "/"))
			}
			f.Close()
		}
		assert.Contains(t, string(sumsFile(t, out)), name, "SHA256SUMS")
		for p := range Mains {
			assert.Contains(t, files, name+"/bin/"+p+ext, platform)
		}
		for _, f := range []string{"LICENSE", "README.md", "skill/harness/SKILL.md"} {
			assert.Contains(t, files, name+"/"+f, platform)
		}
	}

	// The npm packages: one per platform with every executable, and the
	// main package depending on them all (optionally).
	if _, err := exec.LookPath("npm"); err != nil {
		t.Log("npm is not on PATH: the npm packages are not checked")
		return
	}
	for _, platform := range []string{"linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"} {
		files := tarFiles(t, filepath.Join(out, "npm", "harness-agent-"+platform+"-0.0.0-test.tgz"))
		ext := ""
		if strings.HasPrefix(platform, "win32") {
			ext = ".exe"
		}
		for p := range Mains {
			assert.Contains(t, files, "package/bin/"+p+ext, platform)
		}
		assert.Contains(t, files, "package/package.json", platform)
	}
	main := tarFiles(t, filepath.Join(out, "npm", "harness-agent-harness-0.0.0-test.tgz"))
	assert.Contains(t, main, "package/bin/harness.js")
}

// tarFiles lists the names in a .tar.gz.
func tarFiles(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	var files []string
	tr := tar.NewReader(gz)
	for h, err := tr.Next(); err == nil; h, err = tr.Next() {
		files = append(files, strings.TrimSuffix(h.Name, "/"))
	}
	return files
}

func sumsFile(t *testing.T, dir string) []byte {
	b, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	require.NoError(t, err)
	return b
}
