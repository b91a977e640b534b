package sessionhook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// peek finds the mode wherever session_config sits, reading a page, then
// 64 KiB, then the whole file.
func TestPeek(t *testing.T) {
	conc := `"session_config": {"concurrency_mode": "concurrent"}`
	tasks := func(n int) string { return `"tasks": [{"id": "t", "title": "` + strings.Repeat("x", n) + `"}]` }
	for _, tc := range []struct {
		name string
		doc  string
		want bool
	}{
		{"first page", `{` + conc + `, ` + tasks(100<<10) + `}`, true},
		{"past the first page", `{` + tasks(10<<10) + `, ` + conc + `}`, true},
		{"across the first page's end", `{` + tasks(4<<10-40) + `, ` + conc + `, ` + tasks(10) + `}`, true},
		{"past 64 KiB", `{` + tasks(100<<10) + `, ` + conc + `}`, true},
		{"a small file", `{` + conc + `}`, true},
		{"exclusive", `{"session_config": {"concurrency_mode": "exclusive"}, ` + tasks(10<<10) + `}`, false},
		{"absent", `{` + tasks(10<<10) + `}`, false},
		{"absent, small", `{}`, false},
		{"not JSON", strings.Repeat("{", 70<<10), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "harness-tasks.json"), []byte(tc.doc), 0o644))
			assert.Equal(t, tc.want, peek(dir))
		})
	}
	assert.False(t, peek(t.TempDir()), "no tasks file")
}
