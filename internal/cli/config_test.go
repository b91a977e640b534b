package cli

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/state"
)

// Every key `harness config` offers is one the state's parser reads: a
// value of no key's type ([1]) is refused for each, and ignored for a name
// the parser does not know.
func TestConfigKeysAreSessionConfigMembers(t *testing.T) {
	parse := func(name string) error {
		b, err := json.Marshal(map[string]any{"version": 2, "session_config": map[string]any{name: []any{1}}, "tasks": []any{}})
		require.NoError(t, err)
		_, err = state.Parse(b, "t.json")
		return err
	}
	require.NoError(t, parse("not_a_setting"))
	for _, k := range configKeys {
		assert.Error(t, parse(k.name), k.name)
	}
}
