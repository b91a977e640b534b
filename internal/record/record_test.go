package record

import (
	"bytes"
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

func TestSamePrefix(t *testing.T) {
	piece := 256 << 10
	long := bytes.Repeat([]byte("x"), piece+10)
	changed := bytes.Clone(long)
	changed[piece+5] = 'y'
	for _, tc := range []struct {
		name         string
		a, b         []byte
		n            int64
		same, readsA bool
	}{
		{"equal over two pieces", long, long, int64(len(long)), true, true},
		{"a difference in the second piece", long, changed, int64(len(long)), false, true},
		{"the difference past n", long, changed, int64(piece), true, true},
		{"b shorter than n", long, long[:10], int64(len(long)), false, true},
		{"a shorter than n", long[:10], long, int64(len(long)), false, false},
		{"nothing to compare", nil, nil, 0, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			same, readsA := samePrefix(bytes.NewReader(tc.a), bytes.NewReader(tc.b), tc.n)
			assert.Equal(t, tc.same, same)
			assert.Equal(t, tc.readsA, readsA)
		})
	}
}
