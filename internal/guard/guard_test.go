package guard

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
		assert.Equal(t, tt.want, globMatch(tt.glob, tt.rel), "%s ~ %s", tt.glob, tt.rel)
	}
}

func TestAlternating(t *testing.T) {
	assert.True(t, alternating([]string{"x", "a", "b", "a", "b", "a", "b"}))
	assert.False(t, alternating([]string{"a", "b", "a", "b", "a", "c"}))
	assert.False(t, alternating([]string{"a", "a", "a", "a", "a", "a"}))
	assert.False(t, alternating([]string{"a", "b"}))
}

func TestFingerprintIgnoresWhitespace(t *testing.T) {
	assert.Equal(t, fingerprint("Bash", `{"command": "ls"}`), fingerprint("Bash", `{"command":  "ls"}`))
	assert.NotEqual(t, fingerprint("Bash", `{"command":"ls"}`), fingerprint("Read", `{"command":"ls"}`))
}
