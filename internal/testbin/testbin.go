// Package testbin builds the harness executables for the tests that run them
// as whole processes outside testscript (internal/programs runs them in
// process): the one place that knows how, so every such test runs what
// scripts/build.sh would build (static, -trimpath).
//
// The build is shared: every test package of a run (and every later run)
// builds into one cache directory per checkout, where `go build` relinks
// only the executables whose inputs changed (it compares the build ID of
// the file already there), and each test gets hard links to them. A dozen
// links cost seconds of CPU; a build that is up to date costs a fraction of
// one.
package testbin

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// startEnv is the environment the test binary started with, for go build:
// a TestMain or test that points HOME at a scratch directory would
// otherwise hand go build an empty build and module cache (a build from
// scratch, and modules downloaded again).
var startEnv = os.Environ()

// Build puts every executable into a fresh temporary directory of t and
// returns it: DIR/harness, DIR/harness-stop, ….
func Build(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := BuildInto(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// BuildInto puts every executable into dir, for a TestMain that has no
// testing.TB.
func BuildInto(dir string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	cache := cacheDir(root)
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return err
	}
	// Test packages run in parallel: one builds while the others wait,
	// then find the executables up to date.
	unlock, err := lock(filepath.Join(cache, "lock"))
	if err != nil {
		return fmt.Errorf("locking the test build cache: %w", err)
	}
	defer unlock()
	cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(cache, "bin")+string(os.PathSeparator), "./hooks/...")
	cmd.Dir = root
	cmd.Env = append(startEnv, "CGO_ENABLED=0")
	if x := goExperiment(root); x != "" {
		cmd.Env = append(cmd.Env, "GOEXPERIMENT="+x)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the harness executables: %v\n%s", err, out)
	}
	// go build names each executable after its directory (stop, …): the
	// hooks are harness-<dir>, as scripts/build.sh names them.
	mains, err := filepath.Glob(filepath.Join(root, "hooks", "*", "main.go"))
	if err != nil {
		return err
	}
	ext := ""
	if runtime.GOOS == "windows" {
		ext = ".exe"
	}
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		target := name
		if name != "harness" {
			target = "harness-" + name
		}
		if err := linkOrCopy(filepath.Join(cache, "bin", name+ext), filepath.Join(dir, target+ext)); err != nil {
			return err
		}
	}
	return nil
}

// goExperiment is the GOEXPERIMENT scripts/build.sh builds with, as
// scripts/programs.sh's use_go_collector sets it ("" where it sets none,
// or where bash cannot be run), so the tests run the collector the
// executables ship with.
func goExperiment(root string) string {
	cmd := exec.Command("bash", "-c", `. scripts/programs.sh && use_go_collector && printf %s "${GOEXPERIMENT:-}"`)
	cmd.Dir = root
	cmd.Env = startEnv
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// cacheDir is the build cache of the checkout at root, in the temporary
// directory (where go build also works, so its output is renamed into
// place, never half-written).
func cacheDir(root string) string {
	h := fnv.New64a()
	io.WriteString(h, root)
	return filepath.Join(os.TempDir(), fmt.Sprintf("harness-testbin-%d-%x", os.Getuid(), h.Sum64()))
}

// linkOrCopy hard-links src to dst, or copies it where links cannot be
// made. go build replaces a file it relinks (a new file, not a rewrite), so
// a link handed out earlier keeps the executable it was.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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

// Experiment is the GOEXPERIMENT the executable at path was built with
// (its build information), "" for the toolchain's defaults.
func Experiment(path string) (string, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", err
	}
	for _, s := range info.Settings {
		if s.Key == "GOEXPERIMENT" {
			return s.Value, nil
		}
	}
	return "", nil
}

// ShippedExperiment is what scripts/programs.sh means the executables to be
// built with, stated apart from it for the tests that check a build: the
// older collector where the toolchain has it, unless the person building
// set a GOEXPERIMENT of their own.
func ShippedExperiment() string {
	if x := os.Getenv("GOEXPERIMENT"); x != "" {
		return x
	}
	cmd := exec.Command("go", "env", "GOEXPERIMENT")
	cmd.Env = append(os.Environ(), "GOEXPERIMENT=nogreenteagc")
	if cmd.Run() != nil {
		return ""
	}
	return "nogreenteagc"
}
