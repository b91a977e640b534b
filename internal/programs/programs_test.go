package programs

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/harness-agent/harness/internal/invoker"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	cmds := map[string]func(){}
	for name, main := range Mains {
		cmds[name] = func() {
			// A scenario's programs see their own process tree only, not
			// the test runner's ancestors: `go test` may itself run in a
			// Claude Code session. The variable is read here, in the test
			// binary; the harness's own executables have no such switch.
			if pid, err := strconv.Atoi(os.Getenv(boundaryVar)); err == nil && pid > 1 {
				invoker.Boundary = pid
			}
			os.Exit(main())
		}
	}
	cmds["bounded"] = func() { os.Exit(bounded(os.Args[1:])) }
	testscript.Main(m, cmds)
}

// boundaryVar carries the test runner's pid to the scenarios' programs.
const boundaryVar = "HARNESS_TEST_BOUNDARY_PID"

// TestScenarios runs every testdata/*.txtar: one behaviour of a harness
// executable each, with its state files embedded.
func TestScenarios(t *testing.T) {
	p := Params()
	// Under the test's own temporary directory, which the testing package
	// removes: scenarios keep files beside $WORK (a record or a lock
	// directory outside the project), and testscript removes only $WORK.
	p.WorkdirRoot = t.TempDir()
	testscript.Run(t, p)
}

// Params is the shared setup: a private lock directory, a home, and a git
// identity, so scenarios never touch the machine's /tmp locks or config.
func Params() testscript.Params {
	return testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: false,
		Cmds:                commands,
		Setup: func(env *testscript.Env) error {
			work := env.Getenv("WORK")
			for k, v := range map[string]string{
				"HARNESS_LOCK_DIR":    filepath.Join(work, ".locks"),
				"HOME":                filepath.Join(work, ".home"),
				"GIT_CONFIG_NOSYSTEM": "1",
				"GIT_AUTHOR_NAME":     "test", "GIT_AUTHOR_EMAIL": "test@example.com",
				"GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.com",
				"TZ":        "UTC",
				boundaryVar: strconv.Itoa(os.Getpid()),
			} {
				env.Setenv(k, v)
			}
			for _, d := range []string{".locks", ".home"} {
				if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
