package statecache

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/state"
)

func TestCacheFollowsTheFile(t *testing.T) {
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[
	  {"id":"a","title":"A","status":"pending","priority":"P1"},
	  {"id":"b","title":"B","status":"in_progress","claimed_by":"w1","allowed_paths":["src/**"]}]}`), 0o644))

	s, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, &Brief{ID: "a", Title: "A"}, s.Next)
	require.Len(t, s.InProgress, 1)
	assert.Equal(t, []string{"src/**"}, s.InProgress[0].AllowedPaths)
	_, err = os.Stat(Path(dir))
	require.NoError(t, err, "the digest is cached")

	// A cached digest is served as is...
	cached, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, s, cached)

	// ...until the state changes through the harness (a rename), whose
	// writer stores the new digest itself.
	_, err = Update(dir, func(st *state.State) error {
		st.Tasks[0].Status = state.Completed
		return nil
	})
	require.NoError(t, err)
	data, err := os.ReadFile(Path(dir))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"Completed":1`, "the writer refreshed the cache")
	s, err = Load(dir)
	require.NoError(t, err)
	assert.Nil(t, s.Next)
	assert.Equal(t, 1, s.Stats.Completed)

	// A change behind the harness's back (a new inode, size or time) is
	// noticed too.
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[{"id":"z","title":"Z","status":"pending"}]}`), 0o644))
	s, err = Load(dir)
	require.NoError(t, err)
	assert.Equal(t, &Brief{ID: "z", Title: "Z"}, s.Next)
}

func TestCorruptCacheIsIgnored(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[]}`), 0o644))
	require.NoError(t, os.MkdirAll(dir+"/"+RuntimeDir, 0o755))
	require.NoError(t, os.WriteFile(Path(dir), []byte("garbage"), 0o644))
	s, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, 0, s.Stats.Total)
}

func TestMissingState(t *testing.T) {
	_, err := Load(t.TempDir())
	assert.ErrorIs(t, err, state.ErrNotFound)
}
