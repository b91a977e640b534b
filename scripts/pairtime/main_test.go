package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -session gives each run an id of its own, in the payload and in the
// environment, and leaves the given inputs as they were.
func TestFreshSession(t *testing.T) {
	in := filepath.Join(t.TempDir(), "start.json")
	payload := `{"session_id":"bench","cwd":"/p","hook_event_name":"SessionStart"}`
	require.NoError(t, os.WriteFile(in, []byte(payload), 0o644))

	a, b, env, err := fresh("", in, in, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{in, in}, []string{a, b})
	assert.Nil(t, env, "without -session the environment is this process's")

	var ids []string
	for run := range 2 {
		a, b, env, err := fresh("bench", in, in, run)
		require.NoError(t, err)
		// The last one counts (exec.Cmd keeps the last of a key given twice).
		id := ""
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "CLAUDE_CODE_SESSION_ID="); ok {
				id = v
			}
		}
		require.NotEmpty(t, id)
		for _, path := range []string{a, b} {
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, strings.Replace(payload, `"bench"`, `"`+id+`"`, 1), string(got))
		}
		ids = append(ids, id)
	}
	assert.NotEqual(t, ids[0], ids[1], "a new session each run")
	kept, _ := os.ReadFile(in)
	assert.Equal(t, payload, string(kept))
}

// A run is timed and, on Linux, its page faults counted: every process
// touches some memory for the first time.
func TestRunCountsFaults(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("page faults are read from Linux's rusage here")
	}
	r, err := run("true", "", "", nil)
	require.NoError(t, err)
	assert.Positive(t, r.took)
	assert.Positive(t, r.faults)
}
