package docs

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/rhysd/actionlint"
	"github.com/stretchr/testify/require"
)

// The workflow examples in docs/examples stay valid GitHub Actions: each
// is linted as actionlint lints a repository's workflows (syntax,
// expressions, the types of contexts and inputs, the actions' inputs).
func TestWorkflowExamplesLint(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "docs", "examples", "*.yml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	linter, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	require.NoError(t, err)
	for _, f := range files {
		errs, err := linter.LintFile(f, nil)
		require.NoError(t, err, f)
		for _, e := range errs {
			t.Errorf("%s:%d:%d: %s [%s]", filepath.Base(f), e.Line, e.Column, e.Message, e.Kind)
		}
	}
}
