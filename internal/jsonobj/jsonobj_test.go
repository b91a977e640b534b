package jsonobj

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "\n\r\t\b\f\x00\x1f", "<a & b>", "\u2028\u2029", "é ü 😀", "\xff\xfe bad", "a\u2027\u202a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(AppendString(nil, s)))
	})
}

// inner and outer have the shapes the Writer writes; the test holds its
// text to encoding/json's for them.
type inner struct {
	Name  string   `json:"name"`
	Count int      `json:"count"`
	List  []string `json:"list"`
}

type outer struct {
	ID     string   `json:"id"`
	N      int64    `json:"n"`
	On     bool     `json:"on"`
	Nil    []string `json:"nil"`
	Empty  []string `json:"empty"`
	Two    []string `json:"two"`
	In     inner    `json:"in"`
	Bare   struct{} `json:"bare"`
	Last   string   `json:"last"`
	Nested inner    `json:"nested"`
	Items  []inner  `json:"items"`
	None   []inner  `json:"none"`
	Zero   []inner  `json:"zero"`
}

func writeInner(w *Writer, v inner) {
	w.Str("name", v.Name)
	w.Int("count", int64(v.Count))
	w.Strs("list", v.List)
}

func write(indent bool, v outer) []byte {
	w := New(indent)
	w.Str("id", v.ID)
	w.Int("n", v.N)
	w.Bool("on", v.On)
	w.Strs("nil", v.Nil)
	w.Strs("empty", v.Empty)
	w.Strs("two", v.Two)
	w.Open("in")
	w.Str("name", v.In.Name)
	w.Int("count", int64(v.In.Count))
	w.Strs("list", v.In.List)
	w.Close()
	w.Open("bare")
	w.Close()
	w.Str("last", v.Last)
	w.Open("nested")
	writeInner(w, v.Nested)
	w.Close()
	for _, list := range []struct {
		k string
		v []inner
	}{{"items", v.Items}, {"none", v.None}, {"zero", v.Zero}} {
		w.Objects(list.k, len(list.v), list.v == nil, func(i int) { writeInner(w, list.v[i]) })
	}
	return w.Bytes()
}

func TestWriterLaysOutLikeEncodingJSON(t *testing.T) {
	v := outer{ID: "task-1 <x>", N: -42, On: true, Empty: []string{}, Two: []string{"a", "b\n"},
		In: inner{Name: "in", Count: 3, List: []string{"x"}}, Last: "é", Nested: inner{Name: "n"},
		Items: []inner{{Name: "a", List: []string{"1", "2"}}, {Count: 2}}, Zero: []inner{}}
	compact, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, string(compact), string(write(false, v)))
	indented, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	assert.Equal(t, string(indented), string(write(true, v)))
}

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		ok   bool
	}{
		{"object", `{"a":1}`, true},
		{"empty object", `{}`, true},
		{"array", `[1]`, false},
		{"string", `"a"`, false},
		{"broken", `{"a":`, false},
		{"empty", ``, false},
		{"too deep", `{"a":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ok := Read([]byte(tc.data))
			assert.Equal(t, tc.ok, ok)
		})
	}
}

func TestStrs(t *testing.T) {
	obj, ok := Read([]byte(`{"list":["a",1,"b"],"empty":[],"null":null,"text":"x"}`))
	require.True(t, ok)
	assert.Equal(t, []string{"a", "b"}, Strs(obj.Get("list")))
	assert.Equal(t, []string{}, Strs(obj.Get("empty")))
	assert.Nil(t, Strs(obj.Get("null")))
	assert.Nil(t, Strs(obj.Get("text")))
	assert.Nil(t, Strs(obj.Get("missing")))
}
