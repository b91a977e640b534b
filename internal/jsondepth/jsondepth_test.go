package jsondepth

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExceeds(t *testing.T) {
	nested := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name string
		doc  string
		max  int
		want bool
	}{
		{"flat", `{"a": 1, "b": [1, 2]}`, 2, false},
		{"at the limit", nested(3), 3, false},
		{"one past", nested(4), 3, true},
		{"objects count", `{"a": {"b": {"c": {}}}}`, 3, true},
		{"brackets in strings do not", `{"a": "[[[[{{{{"}`, 1, false},
		{"escaped quote keeps the string open", `{"a": "\"[[[["}`, 1, false},
		{"escaped backslash ends it", `{"a": "\\", "b": [[[]]]}`, 2, true},
		{"ten million", nested(10_000_000), Max, true},
		{"unclosed", strings.Repeat("{\"a\":", 5), 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Exceeds([]byte(tc.doc), tc.max))
		})
	}
}

func FuzzExceeds(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"]}"}]}`), 2)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		Exceeds(data, max) // never panics, whatever the bytes
	})
}
