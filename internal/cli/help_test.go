package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// help runs `harness help verb` in-process and returns its output.
func help(t *testing.T, verb string) string {
	t.Helper()
	var out, errs bytes.Buffer
	e := &Env{Stdout: &out, Stderr: &errs, Now: time.Now, Cwd: t.TempDir()}
	require.Equal(t, ExitOK, e.Run([]string{"help", verb}), errs.String())
	require.Empty(t, errs.String())
	return out.String()
}

// Every verb's help names each flag's argument as its synopsis does, and
// never by a Go type: `--timeout int` or `--max-job-minutes string` told a
// person nothing, and a boolean's usage text quoted in backquotes read as
// its argument (`--wait claude --continue …`).
func TestHelpNamesFlagArguments(t *testing.T) {
	option := regexp.MustCompile(`^  --([a-z-]+)(?: (\S+))?$`)
	for _, c := range verbs {
		out := help(t, c.name)
		named := placeholders(c.args)
		shown := map[string]string{}
		for _, line := range strings.Split(out, "\n") {
			if m := option.FindStringSubmatch(line); m != nil {
				shown[m[1]] = m[2]
				assert.NotContains(t, []string{"string", "int", "uint", "float", "duration", "value"}, m[2], "harness %s --%s", c.name, m[1])
			}
		}
		for name, arg := range named {
			if got, ok := shown[name]; ok && got != "" {
				assert.Equal(t, arg, got, "harness %s --%s: the synopsis and the options disagree", c.name, name)
			}
		}
	}
	assert.Contains(t, help(t, "resume"), "\n  --wait\n")
	assert.Contains(t, help(t, "budget"), "\n  --max-job-minutes N\n")
	assert.Contains(t, help(t, "status"), "\n  --interval DURATION\n")
	assert.Contains(t, help(t, "add"), "\n  --timeout SECONDS\n")
	assert.Contains(t, help(t, "hooks"), "\n  --settings FILE\n")
}

func TestPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		synopsis string
		want     map[string]string
	}{
		{"[--out FILE] | --serve [ADDR]", map[string]string{"out": "FILE"}},
		{"[--json] [--watch [--interval DURATION]]", map[string]string{"interval": "DURATION"}},
		{"[--format mermaid|dot|json]", map[string]string{"format": "mermaid|dot|json"}},
		{"ID --category CATEGORY MESSAGE", map[string]string{"category": "CATEGORY"}},
		{"install|uninstall [--settings FILE | --project DIR] [--dry-run]", map[string]string{"settings": "FILE", "project": "DIR"}},
		{"", map[string]string{}},
	} {
		assert.Equal(t, tc.want, placeholders(tc.synopsis), tc.synopsis)
	}
}

func TestClosestFlag(t *testing.T) {
	flags := []string{"validate", "timeout", "max-attempts", "id", "cleanup"}
	for _, tc := range []struct{ typed, want string }{
		{"validat", "validate"},
		{"valdiate", "validate"},
		{"timeuot", "timeout"},
		{"max", "max-attempts"},
		{"ids", "id"},
		{"zzzzzz", ""},
		{"c", "cleanup"}, // a short flag other tools take: the one it begins
		{"q", ""},
	} {
		assert.Equal(t, tc.want, closestFlag(tc.typed, flags), tc.typed)
	}
	assert.Equal(t, "", closestFlag("s", []string{"serve", "settings"}), "a letter that begins two flags names neither")
}
