package docs

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/cli"
)

// TestCommandsDocHasEveryVerb: docs/commands.md says it covers every verb,
// so each verb `harness help` lists has a heading there naming it
// (`harness VERB …`, or one of `harness a|b|c`). It lacked adopt, hooks
// and version.
func TestCommandsDocHasEveryVerb(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "commands.md"))
	require.NoError(t, err)
	named := map[string]bool{}
	heading := regexp.MustCompile("`harness ([a-z]+(?:\\|[a-z]+)*)")
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		for _, m := range heading.FindAllStringSubmatch(line, -1) {
			for _, v := range strings.Split(m[1], "|") {
				named[v] = true
			}
		}
	}
	verbs := helpVerbs(t)
	require.Greater(t, len(verbs), 20, "harness help lists the verbs")
	for _, v := range verbs {
		assert.True(t, named[v], "docs/commands.md has no heading for `harness %s`", v)
	}
}

// helpVerbs is the verbs `harness help` lists, in its order.
func helpVerbs(t *testing.T) []string {
	t.Helper()
	var out, errs bytes.Buffer
	e := &cli.Env{Stdout: &out, Stderr: &errs, Now: time.Now, Cwd: t.TempDir()}
	require.Equal(t, cli.ExitOK, e.Run([]string{"help"}), errs.String())
	var verbs []string
	in := false
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case line == "commands:":
			in = true
		case in && strings.HasPrefix(line, "  "):
			verbs = append(verbs, strings.Fields(line)[0])
		case in:
			in = false
		}
	}
	return verbs
}
