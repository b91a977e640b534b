package failure

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A quoted word reaches the command as the one argument it was.
func TestShellArg(t *testing.T) {
	assert.Equal(t, "task-001", ShellArg("task-001"))
	assert.Equal(t, "refs/harness/snapshots/has%20space/1", ShellArg("refs/harness/snapshots/has%20space/1"))
	for _, s := range []string{"has space", "", "it's", "a\nb", "$(rm -rf /)", "`x`", "*", "-n"} {
		out, err := exec.Command("sh", "-c", "printf %s "+ShellArg(s)).Output()
		require.NoError(t, err)
		assert.Equal(t, s, string(out), "%q quoted as %s", s, ShellArg(s))
	}
}
