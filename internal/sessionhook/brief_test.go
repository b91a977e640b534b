package sessionhook

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestListedCapsEachList(t *testing.T) {
	items := func(n int) []string {
		var s []string
		for i := 0; i < n; i++ {
			s = append(s, "task-"+itoa(i))
		}
		return s
	}
	tests := []struct {
		n    int
		want string
	}{
		{0, ""},
		{1, "dependency: task-0\n"},
		{5, "dependency: task-0\ndependency: task-1\ndependency: task-2\ndependency: task-3\ndependency: task-4\n"},
		{399, "dependency: task-0\ndependency: task-1\ndependency: task-2\ndependency: task-3\ndependency: task-4\ndependency: … and 394 more (harness status)\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		listed(&b, "dependency", items(tt.n), "harness status")
		assert.Equal(t, tt.want, b.String(), "%d items", tt.n)
	}

	var b strings.Builder
	listed(&b, "recovery", []string{strings.Repeat("x", 5000)}, "harness status")
	assert.Less(t, b.Len(), 400, "one item is clipped too")
}
