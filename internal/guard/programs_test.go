package guard

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// programPath knows a repository's configuration and hooks wherever git
// keeps them (a submodule's, a worktree's), and the project's .mcp.json;
// a file of the same name anywhere else is an ordinary file.
func TestProgramPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		is   bool
	}{
		{"/p/.git/config", true},
		{"/p/.git/config.worktree", true},
		{"/p/.git/hooks/pre-commit", true},
		{"/p/.git/hooks/sub/x", true},
		{"/p/.git/modules/lib/config", true},
		{"/p/.git/modules/lib/hooks/post-checkout", true},
		{"/p/.git/modules/lib/modules/inner/config", true},
		{"/p/.git/worktrees/w1/config.worktree", true},
		{"/p/vendor/x/.git/config", true},
		{"/p/.mcp.json", true},
		{"/p/.git", true},
		{"/p/sub/.git", true},
		{"/p/.git/refs/heads/config", false},
		{"/p/.git/refs/heads/hooks/x", false},
		{"/p/.git/HEAD", false},
		{"/p/.git/modules/config", false},
		{"/p/src/config", false},
		{"/p/src/.mcp.json", false},
		{"/p/.git/hooks", false},
	} {
		assert.Equal(t, tc.is, programPath(tc.path, "/p", "") != "", tc.path)
	}
}
