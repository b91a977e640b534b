package sessionhook

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/jsonobj/filled"
)

// The runtime and turn files are written by hand in the layout
// json.MarshalIndent gives the structs and their tags: files written
// either way read the same, and a field added to the struct but not to the
// codec fails here.
func TestRuntimeFileIsEncodingJSONs(t *testing.T) {
	for name, rt := range map[string]*Runtime{
		"every field":  filled.Fill(&Runtime{}),
		"empty":        {},
		"a nil valve":  {SessionID: "s", Idle: map[string]*Valve{"b": {Blocks: 1}, "a": nil}},
		"empty lists":  {Held: []string{}, Idle: map[string]*Valve{}},
		"odd text":     {SessionID: "s\n\"<&>\"\u2028\xff", Stop: Valve{Fingerprint: "\t"}},
		"negative log": {LogOffset: -1},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := json.MarshalIndent(rt, "", "  ")
			require.NoError(t, err)
			assert.Equal(t, string(want), string(rt.encode()))

			back, ok := decodeRuntime(want)
			require.True(t, ok)
			var std Runtime
			require.NoError(t, json.Unmarshal(want, &std))
			assert.Equal(t, &std, back, "read as encoding/json reads it")
		})
	}
	_, ok := decodeRuntime([]byte(`["not", "an", "object"]`))
	assert.False(t, ok)
}

func TestTurnFileIsEncodingJSONs(t *testing.T) {
	for _, turn := range []Turn{*filled.Fill(&Turn{}), {PromptID: "p"}, {}} {
		want, err := json.MarshalIndent(turn, "", "  ")
		require.NoError(t, err)
		assert.Equal(t, string(want), string(turn.encode()))
	}
}
