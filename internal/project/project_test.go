package project

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// recorded is a state root of one task whose record the harness wrote.
func recorded(t *testing.T) string {
	t.Helper()
	t.Setenv("HARNESS_RECORD_DIR", filepath.Join(t.TempDir(), "records"))
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[{"id":"a","title":"A","status":"pending"}]}`), 0o644))
	_, err = statecache.Update(dir, func(s *state.State) error { s.SessionCount = 1; return nil })
	require.NoError(t, err)
	return dir
}

// markFile is the record's mark of dir, as another process would write it.
func markFile(dir string) string { return filepath.Join(record.Dir(dir), "mark.json") }

func TestMarkIsReadOnceUntilThisProcessWritesIt(t *testing.T) {
	dir := recorded(t)
	p := Open(dir)
	m, ok := p.Mark()
	require.True(t, ok)
	assert.True(t, p.Recorded())
	assert.Empty(t, m.Unverified)

	// Another process's write is not seen until the caller says so.
	text, err := os.ReadFile(markFile(dir))
	require.NoError(t, err)
	require.NoError(t, os.Remove(markFile(dir)))
	_, ok = p.Mark()
	assert.True(t, ok, "kept: read once")
	p.Reread()
	_, ok = p.Mark()
	assert.False(t, ok, "read again after Reread")
	require.NoError(t, os.WriteFile(markFile(dir), text, 0o600))
	p.Reread()

	// This process's own write is seen at once.
	_, ok = p.Mark()
	require.True(t, ok)
	record.Of(dir).AddUnverified("a")
	m, ok = p.Mark()
	require.True(t, ok)
	assert.Equal(t, []string{"a"}, m.Unverified, "read again after this process wrote the record")
	assert.False(t, p.Cancelled())
}

func TestSummaryFollowsTheStateThisProcessWrites(t *testing.T) {
	dir := recorded(t)
	p := Open(dir)
	sum, err := p.Summary()
	require.NoError(t, err)
	assert.Equal(t, 1, sum.SessionCount)
	again, err := p.Summary()
	require.NoError(t, err)
	assert.Same(t, sum, again, "read once")

	_, err = statecache.Update(dir, func(s *state.State) error { s.SessionCount = 2; return nil })
	require.NoError(t, err)
	sum, err = p.Summary()
	require.NoError(t, err)
	assert.Equal(t, 2, sum.SessionCount, "read again after this process saved the state")
}

func TestFindAndRecordDirectory(t *testing.T) {
	dir := recorded(t)
	sub := filepath.Join(dir, "src")
	require.NoError(t, os.Mkdir(sub, 0o755))
	t.Setenv("HARNESS_STATE_ROOT", "")
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	p := Find(sub)
	require.NotNil(t, p)
	assert.Equal(t, dir, p.Root)
	assert.Equal(t, record.Record{Root: dir, Dir: record.Dir(dir)}, p.Record())
	assert.False(t, p.Active())
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".harness-active"), nil, 0o644))
	assert.True(t, p.Active(), "the marker is not kept: one stat each time")
	assert.Nil(t, Find(t.TempDir()))
}
