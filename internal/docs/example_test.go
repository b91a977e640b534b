package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/testbin"
)

// step is one "$ command" of a transcript and the output the docs show for it.
type step struct {
	command string
	want    []string
}

// transcriptSteps reads the fenced blocks of a markdown file whose lines start
// with "$ ": each such line is a command, the lines up to the next one its
// output. The documentation's directory placeholder is /tmp/demo.
func transcriptSteps(text string) []step {
	var steps []step
	fenced, transcript := false, false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			transcript = false
			continue
		}
		if !fenced {
			continue
		}
		if strings.HasPrefix(line, "$ ") {
			transcript = true
			steps = append(steps, step{command: strings.TrimPrefix(line, "$ ")})
			continue
		}
		if transcript && line != "" {
			s := &steps[len(steps)-1]
			s.want = append(s.want, line)
		}
	}
	return steps
}

var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`), "TIME"},
	{regexp.MustCompile(`\b[0-9a-f]{7,40}\b`), "COMMIT"},
	{regexp.MustCompile(`\b\d+(\.\d+)?(ms|µs|s)\b`), "DURATION"},
}

// normalize replaces what differs from run to run (times, commit ids,
// durations) and the scratch directory, so the docs' sample values match.
func normalize(line, dir string) string {
	line = strings.ReplaceAll(line, dir, "/tmp/demo")
	line = strings.TrimRight(line, " ")
	for _, v := range volatile {
		line = v.re.ReplaceAllString(line, v.with)
	}
	return line
}

// matchOutput checks the output against the docs: a line "  …" stands for
// any number of lines, a line ending in "…" for any line with that prefix.
func matchOutput(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	w := want[0]
	if strings.TrimSpace(w) == "…" {
		for i := 0; i <= len(got); i++ {
			if matchOutput(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	if len(got) == 0 {
		return false
	}
	ok := w == got[0]
	if prefix, cut := strings.CutSuffix(w, "…"); cut {
		ok = strings.HasPrefix(got[0], prefix)
	}
	return ok && matchOutput(want[1:], got[1:])
}

// TestGuideWorkedExampleRuns runs the worked example of docs/guide.md as
// written, through the real harness executable, in a scratch directory with a
// private HOME, and checks that each command prints what the guide shows, so
// the guide cannot drift from the program.
func TestGuideWorkedExampleRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the harness executable")
	}
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "docs", "guide.md"))
	require.NoError(t, err)
	steps := transcriptSteps(string(data))
	require.GreaterOrEqual(t, len(steps), 10, "the guide's transcript was not found")

	bin := testbin.Build(t)

	tmp := t.TempDir()
	dir := filepath.Join(tmp, "demo")
	require.NoError(t, os.Mkdir(dir, 0o755))
	dir, err = filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + filepath.Join(tmp, "home"),
		"XDG_STATE_HOME=" + filepath.Join(tmp, "home", ".local", "state"),
		"HARNESS_LOCK_DIR=" + tmp,
		"GIT_AUTHOR_NAME=Docs", "GIT_AUTHOR_EMAIL=docs@example.com",
		"GIT_COMMITTER_NAME=Docs", "GIT_COMMITTER_EMAIL=docs@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "LANG=C.UTF-8",
	}
	require.NoError(t, os.MkdirAll(filepath.Join(tmp, "home"), 0o755))

	// One shell runs every command, so an export carries over as it would in
	// the reader's terminal; a marker after each command splits the output.
	const marker = "@@docs-step-done@@"
	var script strings.Builder
	for _, s := range steps {
		script.WriteString(s.command + "\necho " + marker + "\n")
	}
	sh := exec.Command("bash", "-c", "exec 2>&1\n"+script.String())
	sh.Dir = dir
	sh.Env = env
	combined, err := sh.Output()
	require.NoError(t, err, "%s", combined)
	outputs := strings.Split(string(combined), marker+"\n")
	require.Len(t, outputs, len(steps)+1, "%s", combined)

	for i, s := range steps {
		var got []string
		for _, line := range strings.Split(strings.TrimRight(outputs[i], "\n"), "\n") {
			if line != "" {
				got = append(got, normalize(line, dir))
			}
		}
		var want []string
		for _, line := range s.want {
			want = append(want, normalize(line, dir))
		}
		if !matchOutput(want, got) {
			t.Errorf("$ %s\nthe guide shows:\n%s\nit prints:\n%s", s.command, strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
	}
}
