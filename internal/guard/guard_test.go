package guard

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/scope"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		glob, rel string
		want      bool
	}{
		{"src/**", "src/a/b.go", true},
		{"src/**", "srcx/a.go", false},
		{"src/", "src/a/b.go", true},
		{"src/auth", "src/auth/login.go", true},
		{"src/auth", "src/authx.go", false},
		{"*.go", "main.go", true},
		{"*.go", "cmd/main.go", false},
		{"**/*.go", "cmd/main.go", true},
		{"**/*.go", "main.go", true},
		{"docs/*.md", "docs/a.md", true},
		{"docs/*.md", "docs/x/a.md", false},
		{"./README.md", "README.md", true},
		{"a?c", "abc", true},
		{"", "anything", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, scope.MatchGlob(tt.glob, tt.rel), "%s ~ %s", tt.glob, tt.rel)
	}
}

func TestScopeDirectories(t *testing.T) {
	globs := []string{"src/auth/**", "docs/*.md", "cmd/tool"}
	for dir, want := range map[string]bool{
		".": true, "src": true, "src/auth": true, "src/auth/x/y": true, "docs": true,
		"docs/a.md": true, "cmd": true, "cmd/tool/sub": true,
		"lib": false, "src/other": false, "docs/sub": false, "docs/a.txt": false, "cmdx": false,
	} {
		assert.Equal(t, want, anyBelow(globs, dir), "a permitted path may lie at or below %s", dir)
	}
	for dir, want := range map[string]bool{
		"src/auth": true, "src/auth/x": true, "cmd/tool": true, "cmd/tool/a": true,
		".": false, "src": false, "docs": false, "docs/a.md": false, "cmd": false,
	} {
		assert.Equal(t, want, coversTree(globs, dir), "everything below %s is permitted", dir)
	}
	assert.True(t, coversTree([]string{"**"}, "."))
	assert.False(t, coversTree([]string{"src/*"}, "src"), "src/a/b is not permitted by src/*")
	assert.False(t, coversTree([]string{"src/**/*.go"}, "src"))
}

func TestAlternating(t *testing.T) {
	assert.True(t, alternating([]string{"x", "a", "b", "a", "b", "a", "b"}))
	assert.False(t, alternating([]string{"a", "b", "a", "b", "a", "c"}))
	assert.False(t, alternating([]string{"a", "a", "a", "a", "a", "a"}))
	assert.False(t, alternating([]string{"a", "b"}))
}

func TestFingerprint(t *testing.T) {
	fp := func(tool, input string) string { return fingerprint(tool, gjson.Parse(input)) }

	// Bash: the command is the call; Claude Code's description, timeout and
	// run_in_background are not.
	assert.Equal(t, fp("Bash", `{"command":"go test ./...","description":"Run the tests"}`),
		fp("Bash", `{"description":"Re-run tests after the fix","command":" go test ./...\n","timeout":120000,"run_in_background":false}`))
	assert.NotEqual(t, fp("Bash", `{"command":"go test ./a"}`), fp("Bash", `{"command":"go test ./b"}`))
	assert.NotEqual(t, fp("Bash", `{"command":"echo 'a  b'"}`), fp("Bash", `{"command":"echo 'a b'"}`))

	// Other tools: every field counts, written in any order or spacing.
	assert.Equal(t, fp("Read", `{"file_path":"a.go","limit":10}`), fp("Read", `{ "limit": 10, "file_path": "a.go" }`))
	assert.Equal(t, fp("Read", `{"file_path":"a.go"}`), fp("Read", `{"file_path":"\u0061.go"}`))
	assert.NotEqual(t, fp("Read", `{"file_path":"a.go","limit":10}`), fp("Read", `{"file_path":"a.go","limit":20}`))
	assert.NotEqual(t, fp("Edit", `{"file_path":"a","old_string":"x","new_string":"y"}`), fp("Edit", `{"file_path":"a","old_string":"y","new_string":"x"}`))
	assert.Equal(t, fp("MultiEdit", `{"edits":[{"new_string":"b","old_string":"a"}],"file_path":"f"}`), fp("MultiEdit", `{"file_path":"f","edits":[{"old_string":"a","new_string":"b"}]}`))
	assert.NotEqual(t, fp("MultiEdit", `{"edits":[{"a":1},{"b":2}]}`), fp("MultiEdit", `{"edits":[{"b":2},{"a":1}]}`))
	assert.NotEqual(t, fp("Bash", `{"command":"ls"}`), fp("Read", `{"command":"ls"}`))
	// the encoding cannot be forged by choosing keys and values
	assert.NotEqual(t, fp("X", `{"a":"bc"}`), fp("X", `{"ab":"c"}`))
	assert.NotEqual(t, fp("X", `{"a":"1"}`), fp("X", `{"a":1}`))
}

// The heartbeat looks at the summary at most once a minute in either mode:
// in exclusive mode it has nothing to renew, and a call that only reads a
// file would otherwise read the summary for it alone at every call.
func TestHeartbeatLooksOnceAMinute(t *testing.T) {
	for _, mode := range []string{"exclusive", "concurrent"} {
		t.Run(mode, func(t *testing.T) {
			dir := activeRoot(t, 3)
			if mode == "concurrent" {
				path := filepath.Join(dir, "harness-tasks.json")
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path, bytes.Replace(data, []byte(`"exclusive"`), []byte(`"concurrent"`), 1), 0o644))
			}
			Check(hook.Parse(payload(dir, "Read", map[string]any{"file_path": "main.go"})))
			marks, err := filepath.Glob(filepath.Join(dir, ".harness-runtime", "heartbeat-*"))
			require.NoError(t, err)
			require.Len(t, marks, 1, "the look is marked")
			fi, err := os.Stat(marks[0])
			require.NoError(t, err)
			assert.WithinDuration(t, time.Now(), fi.ModTime(), heartbeatEvery)
		})
	}
}

// physical resolves the call's cwd, and takes the state root (resolved
// by root.Find) as it is.
func TestPhysical(t *testing.T) {
	real, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(real, link))
	sub := filepath.Join(real, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	tests := []struct{ name, cwd, dir, want string }{
		{"the root itself", real, real, real},
		{"a link to the root", link, real, real},
		{"under a link", filepath.Join(link, "sub"), real, sub},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, physical(tt.cwd, tt.dir))
		})
	}
}
