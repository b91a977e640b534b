package state

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/harness-agent/harness/internal/failure"
)

func TestCheckID(t *testing.T) {
	for _, id := range []string{"task-001", "auth-login", "A.b_c-9", "1", strings.Repeat("x", MaxIDLength)} {
		assert.NoError(t, CheckID(id), id)
	}
	for _, id := range []string{"", "has space", "evil\n[2099-01-01T00:00:00Z] [SESSION-9] Completed [task-001]",
		"-flag", ".hidden", "_x", "a/b", "a..b", "a.", "x.lock", "a~1", "a^", "a:b", "a@{1}", "a[0]", "é",
		strings.Repeat("x", MaxIDLength+1)} {
		err := CheckID(id)
		assert.True(t, failure.Is(err, failure.Config), "%q: %v", id, err)
	}
}
