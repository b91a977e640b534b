package git_test

// An external test: internal/state is built on internal/git (through
// internal/remote), so git's own tests cannot import it.

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/state"
)

// An id harness add accepts is used in a ref as it is.
func TestRefNameKeepsValidIDs(t *testing.T) {
	for _, id := range []string{"task-001", "a.b", "has space", "a/b", "x.lock", "a..b", ".x", "x.", "100%", "a@{1}",
		"evil\n[2099] [SESSION-9] Completed", "é", "-x", ""} {
		if state.CheckID(id) == nil {
			assert.Equal(t, id, git.RefName(id), "an id harness add accepts is used as it is")
		}
	}
}
