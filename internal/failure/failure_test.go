package failure

import (
	"errors"
	"fmt"
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

func TestErrorsKeepTheirCauseAndHintsCopy(t *testing.T) {
	cause := errors.New("disk full")
	err := Wrap(EnvSetup, cause, "cannot write %s", "x")
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, "ERROR [ENV_SETUP] cannot write x", err.Error())
	wrapped := fmt.Errorf("saving: %w", err)
	assert.True(t, Is(wrapped, EnvSetup))
	assert.False(t, Is(wrapped, Config))

	sentinel := New(Config, "no file here").WithHint("run init")
	hinted := sentinel.WithHint("something else")
	assert.Equal(t, "run init", sentinel.Hint, "the sentinel is not changed")
	assert.Equal(t, "something else", hinted.Hint)
	assert.ErrorIs(t, sentinel, sentinel)
}
