package programs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/testbin"
)

// hookCommands are the executables Claude Code starts on its events,
// PreToolUse before every tool call and Stop at every turn end: whatever
// their packages do at initialisation is paid each time, harness active or
// not.
var hookCommands = []string{"pre-tool-use", "stop", "subagent-stop", "session-start", "session-end", "teammate-idle", "user-prompt-submit", "post-tool-use", "post-tool-use-failure"}

// The hooks link no crypto: crypto/sha256 brings Go's whole FIPS module,
// whose initialisation costs about a third of a millisecond per process
// (internal/digest serves instead). Checked on the built executables with
// GODEBUG=inittrace=1, which lists every package initialised.
func TestHooksLinkNoCrypto(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hook executables")
	}
	t.Parallel()
	bins := testbin.Build(t)
	for _, hook := range hookCommands {
		t.Run(hook, func(t *testing.T) {
			bin := filepath.Join(bins, "harness-"+hook)

			run := exec.Command(bin)
			run.Dir = t.TempDir() // no harness here: the inactive path
			run.Stdin = strings.NewReader(`{}`)
			run.Env = append(os.Environ(), "GODEBUG=inittrace=1")
			trace, err := run.CombinedOutput()
			require.NoError(t, err, "%s", trace)
			require.Contains(t, string(trace), "init runtime", "no init trace")
			for _, l := range strings.Split(string(trace), "\n") {
				assert.False(t, strings.HasPrefix(l, "init crypto/"), "%s: %s", hook, l)
			}
		})
	}
}

// No package a hook links compiles a regexp at package level: compiling one
// costs a good part of a millisecond at every hook start. Compile on first
// use or match by hand. Nor does one build a map there: a map literal is
// made at every start, where a switch costs nothing until it is asked
// (docs/perf.md).
func TestHooksBuildNoRegexpNorMapAtInit(t *testing.T) {
	root := repoRoot(t)
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}|{{join .GoFiles \",\"}}{{end}}"}, hookPackages()...)
	list := exec.Command("go", args...)
	list.Dir = root
	out, err := list.Output()
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		dir, files, _ := strings.Cut(l, "|")
		if !strings.HasPrefix(dir, root) || files == "" {
			continue // the project's own packages only
		}
		for _, name := range strings.Split(files, ",") {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
			require.NoError(t, err)
			for _, decl := range f.Decls {
				g, ok := decl.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				ast.Inspect(g, func(n ast.Node) bool {
					if _, isFunc := n.(*ast.FuncLit); isFunc {
						return false // runs later, not at init
					}
					if lit, ok := n.(*ast.CompositeLit); ok {
						if _, isMap := lit.Type.(*ast.MapType); isMap {
							t.Errorf("%s: a map literal at package level is built at every hook start", fset.Position(lit.Pos()))
						}
					}
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
						if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "regexp" {
							t.Errorf("%s: regexp.%s at package level runs at every hook start", fset.Position(call.Pos()), sel.Sel.Name)
						}
					}
					return true
				})
			}
		}
	}
}

func hookPackages() []string {
	var pkgs []string
	for _, h := range hookCommands {
		pkgs = append(pkgs, "./hooks/"+h)
	}
	return pkgs
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	return root
}

// The report (HTML page, layout, log timeline, live view) is for a person at
// the CLI, as are the readers of other tools' plans: no hook executable
// links them.
func TestHooksDoNotLinkTheReport(t *testing.T) {
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, hookPackages()...)
	list := exec.Command("go", args...)
	list.Dir = repoRoot(t)
	out, err := list.Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/harness-agent/harness/internal/state", "the listing works")
	require.NotContains(t, deps, "github.com/harness-agent/harness/internal/report")
	require.NotContains(t, deps, "github.com/harness-agent/harness/internal/plan")
	require.NotContains(t, deps, "go.yaml.in/yaml/v3")
}
