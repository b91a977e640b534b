package guard

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/shadow"
	"github.com/harness-agent/harness/internal/shellscan"
)

// TestReadOnly: what the shadow history skips must really leave the
// project's files alone; everything else is recorded first.
func TestReadOnly(t *testing.T) {
	const dir = "/nonexistent/proj"
	for cmd, want := range map[string]bool{
		"ls -la 2>/dev/null":                         true,
		"cat a.go | grep x | head -5":                true,
		"git status && git diff HEAD~1 -- src":       true,
		"git log --oneline | wc -l > /tmp/count.txt": true,
		"harness status":                             true,
		"find . -name '*.go' | xargs grep -n TODO":   true,
		"sed -n 1,20p main.go":                       true,

		"rm -rf src":                    false,
		"sed -i s/a/b/ main.go":         false,
		"echo x > notes.txt":            false,
		"echo x > $OUT":                 false,
		"git checkout .":                false,
		"git -C sub status":             false, // not known: recorded
		"git diff --output=p.diff":      false,
		"go test ./...":                 false,
		"go vet ./... && go list -m":    true,
		"go env GOPATH":                 true,
		"go env -w GOFLAGS=-x":          false,
		"go generate ./...":             false,
		"make":                          false,
		"python3 gen.py":                false,
		"find . -name x -delete":        false,
		"ls | xargs rm":                 false,
		"./scripts/ls":                  false,
		"harness validate task-001":     false,
		"cat <<EOF":                     false,
		"sort -o out.txt in.txt":        false,
		"awk '{print > \"o\"}' f":       false,
		"eval \"$(cat script)\"":        false,
		"awk 'BEGIN{system(\"rm x\")}'": false,
		"sed -n 'w out.txt' in.txt":     false,
		"awk '{print $1}' f":            true,
	} {
		assert.Equal(t, want, readOnly(shellscan.Analyze(cmd, dir), dir), "%s", cmd)
	}
}

// TestShadowSaveWhen: a checkpoint before a call that may change the
// project, none before one that reads or writes elsewhere, none before a
// call the guard denies.
func TestShadowSaveWhen(t *testing.T) {
	dir := activeRoot(t, 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644))
	count := func() int {
		ps, err := shadow.List(dir)
		require.NoError(t, err)
		return len(ps)
	}
	call := func(tool string, input map[string]any) hook.Decision {
		return Check(hook.Parse(payload(dir, tool, input)))
	}
	call("Read", map[string]any{"file_path": "main.go"})
	call("Bash", map[string]any{"command": "cat main.go | wc -l"})
	call("Write", map[string]any{"file_path": filepath.Join(t.TempDir(), "elsewhere.txt"), "content": "x"})
	call("Write", map[string]any{"file_path": "harness-progress.txt", "content": "log\n"})
	assert.Equal(t, 0, count(), "reads, writes outside the project and of harness files are not recorded")
	d := call("Bash", map[string]any{"command": "sed -i s/a/b/ harness-tasks.json"})
	require.Equal(t, hook.Deny, d.Kind)
	assert.Equal(t, 0, count(), "a denied call does not run: nothing to record")
	call("Write", map[string]any{"file_path": "main.go", "content": "package other\n"})
	assert.Equal(t, 1, count())
	call("Bash", map[string]any{"command": "go generate ./..."})
	assert.Equal(t, 1, count(), "nothing changed since the last checkpoint")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package other\n"), 0o644))
	call("Edit", map[string]any{"file_path": filepath.Join(dir, "main.go"), "old_string": "other", "new_string": "main"})
	ps, err := shadow.List(dir)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	assert.Equal(t, "Edit: "+filepath.Join(dir, "main.go"), ps[0].Message)
}
