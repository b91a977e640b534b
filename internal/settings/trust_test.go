package settings

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSandboxWrites(t *testing.T) {
	home := t.TempDir()
	project := t.TempDir()
	write := func(path, doc string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	}
	on, allow := SandboxWrites(home, project)
	assert.False(t, on)
	assert.Empty(t, allow)

	write(filepath.Join(home, ".claude", "settings.json"), `{"sandbox":{"enabled":true,"filesystem":{"allowWrite":["/locks"],"denyWrite":["/records"]}}}`)
	on, allow = SandboxWrites(home, project)
	assert.True(t, on)
	assert.Equal(t, []string{"/locks"}, allow)

	// A project's settings may switch it off; their write rules do not count.
	write(filepath.Join(project, ".claude", "settings.json"), `{"sandbox":{"enabled":false,"filesystem":{"allowWrite":["/"]}}}`)
	on, allow = SandboxWrites(home, project)
	assert.False(t, on)
	assert.Equal(t, []string{"/locks"}, allow)
}
