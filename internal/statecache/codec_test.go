package statecache

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/jsonobj"
	"github.com/harness-agent/harness/internal/jsonobj/filled"
	"github.com/harness-agent/harness/internal/state"
)

func TestSummaryFileRoundTrips(t *testing.T) {
	// Every field set, each to its own value: a field the codec forgets
	// (one added to the Summary, the Config or a Claim later) fails here.
	s := filled.Fill(&Summary{})
	s.NextTask.Status = state.Pending
	s.NextTask.Review = state.ReviewOff
	s.FromBackup = false // never written: such a summary is not cached
	assert.Equal(t, s, decode(s.encode()))

	// The lists and pointers left empty, as a summary of a state with no
	// next task and no claims has them.
	bare := &Summary{Key: "k", Config: state.Config{AllowedCommands: []string{}}, Why: "all done"}
	assert.Equal(t, bare, decode(bare.encode()))
}

// A session's start changes the summary's key and session count alone:
// written in place (jsonobj.InPlace), whatever the config and the next
// task hold after them, not as a new file renamed over the old.
func TestSessionCountWrittenInPlace(t *testing.T) {
	s := filled.Fill(&Summary{})
	s.FromBackup = false
	s.Key, s.SessionCount = "339215:1795848011992076106:1795848011992076106:10486531", 100097
	was := s.encode()
	require.Greater(t, len(was), 1024, "a summary longer than a sector")
	s.Key, s.SessionCount = "339215:1795848019553003568:1795848019553003568:10486531", 100098
	assert.True(t, jsonobj.InPlace(was, s.encode()))
}

// An empty allowed_commands is a policy that allows no program, not the
// absence of one: the cached summary says what a fresh one says (the
// summary once held the list twice and dropped an empty one from the copy
// the guard read, so a cached summary turned the policy off).
func TestSummaryKeepsAnEmptyCommandPolicy(t *testing.T) {
	for _, doc := range []string{
		`{"session_config": {"allowed_commands": []}, "tasks": [{"id": "a", "status": "pending"}]}`,
		`{"session_config": {"allowed_commands": null}, "tasks": [{"id": "a", "status": "pending"}]}`,
		`{"session_config": {"allowed_commands": ["go"]}, "tasks": [{"id": "a", "status": "pending"}]}`,
	} {
		st, err := state.Parse([]byte(doc), state.FileName)
		require.NoError(t, err)
		fresh := Of(st)
		cached := decode(fresh.encode())
		require.NotNil(t, cached)
		assert.Equal(t, fresh.Config.AllowedCommands, cached.Config.AllowedCommands, doc)
		assert.Equal(t, fresh.Config.AllowedCommands == nil, cached.Config.AllowedCommands == nil, doc)
	}
}

func TestSummaryFileOfAnotherLayoutIsStale(t *testing.T) {
	t.Setenv("HARNESS_LOCK_DIR", t.TempDir())
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(state.Path(dir), []byte(`{"tasks":[{"id":"a","title":"A","status":"pending"}]}`), 0o644))
	s, err := Load(dir)
	require.NoError(t, err)

	// The file as an earlier harness wrote it (encoding/json's layout of
	// the same struct), and damaged ones: none is served from the cache.
	old, err := json.Marshal(s)
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"encoding/json layout": old,
		"not JSON":             []byte(`{"key":`),
		"bad next task":        []byte(`{"key":"` + s.Key + `","format":` + strconv.Itoa(format) + `,"next_task":{"id":"a","status":"done"}}`),
		"an earlier format":    bytes.Replace(s.encode(), []byte(`"format":`+strconv.Itoa(format)), []byte(`"format":2`), 1),
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(Path(dir), data, 0o644))
			assert.Nil(t, Cached(dir))
			again, err := Load(dir)
			require.NoError(t, err)
			assert.Equal(t, s, again, "made again from the tasks file")
		})
	}
}
