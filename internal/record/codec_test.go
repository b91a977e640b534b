package record

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/harness-agent/harness/internal/jsonobj/filled"
)

// The mark is written by hand in the layout json.Marshal gives the struct
// and its tags: marks written either way read the same, and a field added
// to the struct but not to the codec fails here.
func TestMarkFileIsEncodingJSONs(t *testing.T) {
	for name, m := range map[string]Mark{
		"every field": *filled.Fill(&Mark{}),
		"zero":        {},
		"no init":     {Root: "/p", Size: 10, ModNs: 1795684152299484489, Active: true},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(m)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(m.encode()))
			back, ok := decodeMark(want)
			require.True(t, ok)
			assert.Equal(t, m, back)
		})
	}
	_, ok := decodeMark([]byte(`"mark"`))
	assert.False(t, ok)
}
