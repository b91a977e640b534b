package state

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetKeepsLayout(t *testing.T) {
	pretty := "{\n  \"tasks\": [\n    {\n      \"id\": \"a\",\n      \"mine\": {\"x\": [1,2]}\n    }\n  ],\n  \"empty\": [],\n  \"n\": 1\n}\n"
	tests := []struct {
		name, doc, path string
		v               any
		want            string
	}{
		{"replace scalar", pretty, "n", 2,
			"{\n  \"tasks\": [\n    {\n      \"id\": \"a\",\n      \"mine\": {\"x\": [1,2]}\n    }\n  ],\n  \"empty\": [],\n  \"n\": 2\n}\n"},
		{"new member", pretty, "tasks.0.status", "done",
			"{\n  \"tasks\": [\n    {\n      \"id\": \"a\",\n      \"mine\": {\"x\": [1,2]},\n      \"status\": \"done\"\n    }\n  ],\n  \"empty\": [],\n  \"n\": 1\n}\n"},
		{"append element", pretty, "tasks.-1", map[string]any{"id": "b"},
			"{\n  \"tasks\": [\n    {\n      \"id\": \"a\",\n      \"mine\": {\"x\": [1,2]}\n    },\n    {\n      \"id\": \"b\"\n    }\n  ],\n  \"empty\": [],\n  \"n\": 1\n}\n"},
		{"append to empty", pretty, "empty.-1", "x",
			"{\n  \"tasks\": [\n    {\n      \"id\": \"a\",\n      \"mine\": {\"x\": [1,2]}\n    }\n  ],\n  \"empty\": [\n    \"x\"\n  ],\n  \"n\": 1\n}\n"},
		{"nested missing parent", pretty, "tasks.0.validation.command", "go test",
			"{\n  \"tasks\": [\n    {\n      \"id\": \"a\",\n      \"mine\": {\"x\": [1,2]},\n      \"validation\": {\n        \"command\": \"go test\"\n      }\n    }\n  ],\n  \"empty\": [],\n  \"n\": 1\n}\n"},
		{"no html escaping", pretty, "n", "a && b < c",
			"{\n  \"tasks\": [\n    {\n      \"id\": \"a\",\n      \"mine\": {\"x\": [1,2]}\n    }\n  ],\n  \"empty\": [],\n  \"n\": \"a && b < c\"\n}\n"},
		{"compact stays compact", `{"tasks":[{"id":"a"}],"n":1}`, "tasks.0.status", "x",
			`{"tasks":[{"id":"a","status":"x"}],"n":1}`},
		{"compact append", `{"tasks":[{"id":"a"}]}`, "tasks.-1", map[string]any{"id": "b"},
			`{"tasks":[{"id":"a"},{"id":"b"}]}`},
		{"top-level new key", "{\n  \"n\": 1\n}", "m", 2, "{\n  \"n\": 1,\n  \"m\": 2\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := set([]byte(tt.doc), tt.path, tt.v)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(out))
			assert.True(t, json.Valid(out))
		})
	}
}

func TestSetTopLevelWithTrailingNewline(t *testing.T) {
	out, err := set([]byte("{\"tasks\": []}\n"), "session_count", 1)
	require.NoError(t, err)
	assert.Equal(t, "{\"tasks\": [],\"session_count\":1}\n", string(out))
	out, err = set([]byte("{\n  \"tasks\": []\n}\n\n"), "last_session", "x")
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"tasks\": [],\n  \"last_session\": \"x\"\n}\n\n", string(out))
}
