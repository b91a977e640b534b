package budget

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/jsonobj/filled"
)

// The usage file is written by hand in the layout json.MarshalIndent gives
// the struct and its tags: files written either way read the same, and a
// field added to the struct but not to the codec fails here.
func TestUsageFileIsEncodingJSONs(t *testing.T) {
	for name, s := range map[string]*Session{
		"every field": filled.Fill(&Session{}),
		"zero":        {},
		"a session":   {SessionID: "s", Session: 3, StartedAt: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC), LastSeen: time.Date(2026, 11, 26, 9, 5, 1, 500, time.UTC), Offset: 99},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := json.MarshalIndent(s, "", "  ")
			require.NoError(t, err)
			assert.Equal(t, string(want), string(s.encode()))

			back, ok := decode(want)
			require.True(t, ok)
			var std Session
			require.NoError(t, json.Unmarshal(want, &std))
			assert.Equal(t, &std, back, "read as encoding/json reads it")
		})
	}
	for _, bad := range []string{`[]`, `{"started_at":"yesterday"}`, `{"session_id":`} {
		_, ok := decode([]byte(bad))
		assert.False(t, ok, bad)
	}
}
