// Package testbin builds the harness executables for the tests that run them
// as whole processes outside testscript (internal/programs runs them in
// process): the one place that knows how, so every such test runs what
// scripts/build.sh would build (static, -trimpath).
package testbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Build builds every executable into a fresh temporary directory of t and
// returns it: DIR/harness, DIR/harness-stop, …. Go's build cache makes a
// second build in the same run cheap.
func Build(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := BuildInto(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// BuildInto builds every executable into dir, for a TestMain that has no
// testing.TB.
func BuildInto(dir string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-trimpath", "-o", dir+string(os.PathSeparator), "./hooks/...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the harness executables: %v\n%s", err, out)
	}
	// go build names each executable after its directory (stop, …): the
	// hooks are harness-<dir>, as scripts/build.sh names them.
	entries, err := os.ReadDir(filepath.Join(root, "hooks"))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "harness" {
			continue
		}
		ext := ""
		if runtime.GOOS == "windows" {
			ext = ".exe"
		}
		if err := os.Rename(filepath.Join(dir, e.Name()+ext), filepath.Join(dir, "harness-"+e.Name()+ext)); err != nil {
			return err
		}
	}
	return nil
}

// RepoRoot is the directory holding go.mod, above the working directory:
// the repository's root when a test runs.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}
