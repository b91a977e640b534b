package jsonedit

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
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
			out, err := Set([]byte(tt.doc), tt.path, tt.v)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(out))
			assert.True(t, json.Valid(out))
		})
	}
}

func TestSetTopLevelWithTrailingNewline(t *testing.T) {
	out, err := Set([]byte("{\"tasks\": []}\n"), "session_count", 1)
	require.NoError(t, err)
	assert.Equal(t, "{\"tasks\": [],\"session_count\":1}\n", string(out))
	out, err = Set([]byte("{\n  \"tasks\": []\n}\n\n"), "last_session", "x")
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"tasks\": [],\n  \"last_session\": \"x\"\n}\n\n", string(out))
}

func TestAppendRemoveRoundTrip(t *testing.T) {
	tests := []struct {
		name, doc, path, key string
		v                    any
		want                 string
	}{
		{"crlf member", "{\r\n  \"a\": 1\r\n}\r\n", "", "b", []int{1},
			"{\r\n  \"a\": 1,\r\n  \"b\": [\r\n    1\r\n  ]\r\n}\r\n"},
		{"empty object opens", "{\n  \"hooks\": {}\n}\n", "hooks", "Stop", 1,
			"{\n  \"hooks\": {\n    \"Stop\": 1\n  }\n}\n"},
		{"flat array", `{"a":[1,2]}`, "a", "", 3, `{"a":[1,2,3]}`},
		{"tab indent", "{\n\t\"a\": [\n\t\t1\n\t]\n}", "a", "", "x", "{\n\t\"a\": [\n\t\t1,\n\t\t\"x\"\n\t]\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Append([]byte(tt.doc), tt.path, tt.key, tt.v)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(out))
			assert.True(t, json.Valid(out))
			added := tt.key
			if tt.path != "" {
				added = tt.path + "." + tt.key
			}
			if tt.key == "" {
				added = tt.path + "." + strconv.Itoa(len(gjsonArray(out, tt.path))-1)
			}
			back, err := Remove(out, added)
			require.NoError(t, err)
			if tt.name != "empty object opens" { // an opened container stays open
				assert.Equal(t, tt.doc, string(back))
			}
		})
	}
}

func TestReplaceKeepsCRLFAndRefusesWhatItCannotPlace(t *testing.T) {
	out, err := Replace([]byte("{\r\n  \"a\": 1\r\n}"), "a", map[string]int{"b": 2})
	require.NoError(t, err)
	assert.Equal(t, "{\r\n  \"a\": {\r\n    \"b\": 2\r\n  }\r\n}", string(out))
	_, err = Replace([]byte(`{"a": 1}`), "missing", 2)
	assert.ErrorIs(t, err, ErrLayout)
	_, err = Remove([]byte(`{"a": 1}`), "missing")
	assert.ErrorIs(t, err, ErrLayout)
}

// FuzzEdit: on any valid JSON object, an edit never panics, and what it
// returns without error is valid JSON holding the new value, with the other
// members unchanged; removing an appended member gives the original back.
// Explore with `go test -fuzz=FuzzEdit ./internal/jsonedit`.
func FuzzEdit(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":1}`, "{\n  \"a\": [1, 2],\n  \"b\": {}\n}\n", "{\r\n\t\"a\": {\"x\": null}\r\n}\r\n",
		`{"a": "\"}", "b": [[], {}]}`, "  {\n\"a\":1}  ",
	} {
		f.Add([]byte(seed), "a", "k")
	}
	f.Fuzz(func(t *testing.T, doc []byte, path, key string) {
		if !json.Valid(doc) || !gjson.ParseBytes(doc).IsObject() || !plainName(path) || !plainName(key) {
			return
		}
		out, err := Set(doc, path, "v")
		if err == nil {
			require.True(t, json.Valid(out), "Set gave invalid JSON: %q", out)
			require.Equal(t, "v", gjson.GetBytes(out, path).String())
		}
		if gjson.GetBytes(doc, key).Exists() {
			return
		}
		out, err = Append(doc, "", key, []int{1})
		if err != nil {
			return
		}
		require.True(t, json.Valid(out), "Append gave invalid JSON: %q", out)
		back, err := Remove(out, key)
		require.NoError(t, err)
		if len(bytes.TrimSpace(bytes.TrimSpace(doc)[1:len(bytes.TrimSpace(doc))-1])) > 0 {
			require.Equal(t, string(doc), string(back))
		} else {
			require.True(t, json.Valid(back))
		}
	})
}

// plainName reports whether s is a member name that means itself in a gjson
// path (the fuzzer's paths are one member deep).
func plainName(s string) bool {
	if s == "" || !utf8.ValidString(s) || s[0] >= '0' && s[0] <= '9' || s[0] == '-' {
		return false
	}
	return !strings.ContainsAny(s, ".*?#|@\\!=<>%[]{}(),\"' \t\n\r")
}

func gjsonArray(doc []byte, path string) []gjson.Result { return gjson.GetBytes(doc, path).Array() }

// AppendAll is Append of each value in turn, in one edit.
func TestAppendAllIsAppendOneByOne(t *testing.T) {
	vs := []any{map[string]any{"id": "a"}, 2, "three"}
	for _, doc := range []string{
		"{\n  \"tasks\": []\n}\n",
		"{\n  \"tasks\": [\n    {\"id\": \"x\"}\n  ]\n}\n",
		"{\"tasks\":[1]}",
		"{\"tasks\":[]}",
		"{\r\n\t\"tasks\": [\r\n\t\t1\r\n\t]\r\n}\r\n",
	} {
		want := []byte(doc)
		for _, v := range vs {
			var err error
			want, err = Set(want, "tasks.-1", v)
			require.NoError(t, err)
		}
		got, err := LayoutOf([]byte(doc)).AppendAll([]byte(doc), "tasks", vs)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%q", doc)
		same, err := LayoutOf([]byte(doc)).AppendAll([]byte(doc), "tasks", nil)
		require.NoError(t, err)
		assert.Equal(t, doc, string(same))
	}
}
