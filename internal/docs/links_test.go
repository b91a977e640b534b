package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// repoRoot is the repository's top directory, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return root
}

// markdownFiles lists README.md and every docs/*.md, relative to root.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	return files
}

var (
	linkRe    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	headingRe = regexp.MustCompile(`^#{1,6} +(.*?)\s*$`)
)

// proseLines returns the lines outside fenced code blocks, where a link or a
// heading means what it says.
func proseLines(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out
}

// slug is the anchor GitHub gives a heading: lower case, punctuation other
// than '-' and '_' dropped, spaces turned into '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors is the set of heading anchors of a markdown file.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	set := map[string]bool{}
	for _, line := range proseLines(string(data)) {
		if m := headingRe.FindStringSubmatch(line); m != nil {
			set[slug(m[1])] = true
		}
	}
	return set
}

// TestRelativeLinksResolve: every relative link in README.md and docs/*.md
// names a file of the repository and, when it has a #fragment, a heading of
// that file, so moving or renaming a section cannot leave a dead link.
func TestRelativeLinksResolve(t *testing.T) {
	root := repoRoot(t)
	checked := 0
	for _, file := range markdownFiles(t, root) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, file)
		for _, line := range proseLines(string(data)) {
			for _, m := range linkRe.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, fragment, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				}
				_, err := os.Stat(dest)
				if !assertNoErr(t, err, "%s: link %s: no such file", rel, target) {
					continue
				}
				if fragment != "" && strings.HasSuffix(dest, ".md") {
					if !anchors(t, dest)[fragment] {
						t.Errorf("%s: link %s: no heading with anchor #%s", rel, target, fragment)
					}
				}
			}
		}
	}
	require.Positive(t, checked, "no relative links found: the link pattern is broken")
}

func assertNoErr(t *testing.T, err error, format string, args ...any) bool {
	t.Helper()
	if err != nil {
		t.Errorf(format, args...)
		return false
	}
	return true
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"npx skills": "npx-skills",
		"Detected and put back (`harness-post-tool-use`)": "detected-and-put-back-harness-post-tool-use",
		"`harness init [DIR] [--no-exclude] [--no-git]`":  "harness-init-dir---no-exclude---no-git",
	} {
		require.Equal(t, want, slug(heading), heading)
	}
}
