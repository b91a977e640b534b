package record

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSameBytes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := dir + "/" + name
		require.NoError(t, os.WriteFile(path, data, 0o644))
		return path
	}
	big := []byte(strings.Repeat("0123456789abcdef", 40000)) // 640 KB: several pieces
	other := append([]byte(nil), big...)
	other[len(other)-1] = 'X'
	for name, tc := range map[string]struct {
		a, b []byte
		same bool
	}{
		"empty":           {nil, nil, true},
		"small same":      {[]byte("{}"), []byte("{}"), true},
		"big same":        {big, big, true},
		"last byte":       {big, other, false},
		"one longer":      {big, append(append([]byte(nil), big...), ' '), false},
		"a piece shorter": {big[:256<<10], big, false},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.same, sameBytes(write("a", tc.a), write("b", tc.b)))
		})
	}
	assert.False(t, sameBytes(dir+"/none", dir+"/a"))
}
