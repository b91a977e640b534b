package plan

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*/*.want from what the parsers read")

// TestFixtures reads every file of testdata/FORMAT/ (real-shaped plans,
// their sources named in the README beside them): it is told to be of
// FORMAT, every item is a task or skipped with why (FILE.want lists
// them), an export with nothing done gives back the same bytes, and one
// with everything done reads back as the same items, all done.
func TestFixtures(t *testing.T) {
	for _, format := range Formats {
		files, _ := filepath.Glob(filepath.Join("testdata", format, "*"))
		for _, file := range files {
			if fi, err := os.Stat(file); err != nil || fi.IsDir() || filepath.Ext(file) == ".want" || filepath.Base(file) == "README.md" {
				continue
			}
			t.Run(format+"/"+filepath.Base(file), func(t *testing.T) {
				data, err := os.ReadFile(file)
				require.NoError(t, err)
				got, err := Detect(file, data)
				require.NoError(t, err)
				assert.Equal(t, format, got, "detected")
				p, err := Parse(format, file, data)
				require.NoError(t, err)
				report := describe(p)
				if *update {
					require.NoError(t, os.WriteFile(file+".want", []byte(report), 0o644))
				}
				want, err := os.ReadFile(file + ".want")
				require.NoError(t, err, "go test ./internal/plan -run TestFixtures -update writes it")
				assert.Equal(t, string(want), report)

				same, marked, err := Patch(format, file, data, func(string) Verdict { return Leave })
				require.NoError(t, err)
				assert.Empty(t, marked)
				assert.Equal(t, string(data), string(same), "an export with nothing done changes the file")

				all, _, err := Patch(format, file, data, func(string) Verdict { return Done })
				require.NoError(t, err)
				_, stored := decode(data)
				_, written := decode(all)
				assert.Equal(t, stored.name, written.name, "the export keeps the file's encoding")
				q, err := Parse(format, file, all)
				require.NoError(t, err, "%s", all)
				require.Len(t, q.Items, len(p.Items))
				for i, it := range q.Items {
					assert.Equal(t, p.Items[i].Source, it.Source)
					assert.True(t, it.Done, "%s not done after the export", it.Source)
				}
			})
		}
	}
}

// describe lists what a plan holds, one line an item, skip or note.
func describe(p *Plan) string {
	var b strings.Builder
	known := map[string]bool{}
	for _, it := range p.Items {
		known[it.Source] = true
	}
	for _, it := range p.Items {
		status := "todo"
		if it.Done {
			status = "done"
		}
		fmt.Fprintf(&b, "item %s %s %s %q\n", it.Source, it.Priority, status, it.Title)
		if it.Description != "" {
			fmt.Fprintf(&b, "  description %q\n", it.Description)
		}
		for _, d := range it.DependsOn {
			mark := ""
			if !known[d] {
				mark = " (not an item)"
			}
			fmt.Fprintf(&b, "  after %s%s\n", d, mark)
		}
		for _, a := range it.Acceptance {
			fmt.Fprintf(&b, "  accept %q\n", a)
		}
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(&b, "skipped %s %q: %s\n", s.Source, s.Title, s.Why)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "note %s\n", n)
	}
	return b.String()
}
