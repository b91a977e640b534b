package guard

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
