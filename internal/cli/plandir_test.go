package cli

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNaturalCompare(t *testing.T) {
	names := []string{"back-10 - b.md", "back-2 - a.md", "back-3.10 - d.md", "back-3.2 - c.md", "Back-3 - x.md", "readme.md"}
	slices.SortFunc(names, naturalCompare)
	assert.Equal(t, []string{"back-2 - a.md", "Back-3 - x.md", "back-3.2 - c.md", "back-3.10 - d.md", "back-10 - b.md", "readme.md"}, names)
}
