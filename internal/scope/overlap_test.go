package scope

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b []string
		want bool
	}{
		{[]string{"src/a/**"}, []string{"src/b/**"}, false},
		{[]string{"src/a/**"}, []string{"src/a/x.go"}, true},
		{[]string{"src/a"}, []string{"src/ab"}, false},
		{[]string{"src/a"}, []string{"src/a/b.go"}, true},
		{[]string{"*.md"}, []string{"docs/"}, true},
		{[]string{"docs/", "README.md"}, []string{"src/**", "README.md"}, true},
		{[]string{"docs/"}, []string{"src/**", "go.mod"}, false},
		{nil, []string{"src/**"}, false},
		{[]string{"./web/**"}, []string{"web/index.html"}, true},
	} {
		assert.Equal(t, tc.want, Overlap(tc.a, tc.b), "%v %v", tc.a, tc.b)
		assert.Equal(t, tc.want, Overlap(tc.b, tc.a), "%v %v (swapped)", tc.b, tc.a)
	}
}
