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

func TestInPlace(t *testing.T) {
	long := strings.Repeat(" ", 600)
	for _, tc := range []struct {
		name, was, now string
		ok             bool
	}{
		{"a digit", `{"blocks": 1, "f": "x"}`, `{"blocks": 2, "f": "x"}`, true},
		{"letters in a string", `{"f": "abc=10"}`, `{"f": "abc=11"}`, true},
		{"a run of digits", `{"a": 19}`, `{"a": 20}`, true},
		{"past the first sector", `{"p": "` + long + `", "a": 1}`, `{"p": "` + long + `", "a": 2}`, true},
		{"the same text", `{"a": 1}`, `{"a": 1}`, false},
		{"another length", `{"a": 9}`, `{"a": 10}`, false},
		{"two members", `{"a": 1, "b": 2}`, `{"a": 2, "b": 3}`, true},
		{"a member added", `{"a": 1, "b": 2}`, `{"a":12, "b": 2}`, false},
		{"a quote", `{"a": "x", "b": 1}`, `{"a": "xx""b": 1}`, false},
		{"a backslash", `{"a": "xy"}`, `{"a": "x\"}`, false},
		{"a run across sectors", `{"a": 1` + long + `2}`, `{"a": 3` + long + `4}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok := InPlace([]byte(tc.was), []byte(tc.now))
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			// Any mix of the two texts is JSON of the same shape.
			for _, keep := range []int{0, 1} {
				mix := []byte(tc.was)
				for k := range mix {
					if k%2 == keep {
						mix[k] = tc.now[k]
					}
				}
				_, valid := Read(mix)
				assert.True(t, valid, "%s", mix)
			}
		})
	}
}
