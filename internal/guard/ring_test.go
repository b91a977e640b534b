package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The doom-loop ring is appended to and read from its tail: across many
// calls it keeps the window exactly and its file stays bounded.
func TestRingKeepsTheWindowAndStaysSmall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runtime", "calls-s")
	var all []string
	for i := range 5000 {
		ring := readRing(path)
		add := []string{fmt.Sprintf("%016x", i)}
		if i%7 == 0 {
			add = append([]string{resetMark}, add...)
		}
		all = append(all, add...)
		ring = append(ring, add...)
		if len(ring) > loopWindow {
			ring = ring[len(ring)-loopWindow:]
		}
		saveRing(path, add, ring)

		got := readRing(path)
		require.GreaterOrEqual(t, len(got), min(len(all), loopWindow))
		require.Equal(t, all[len(all)-min(len(all), loopWindow):], got[len(got)-min(len(all), loopWindow):], "call %d", i)
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.Less(t, fi.Size(), int64(ringCompactAt+64))
	}
}

func TestReadRingDropsAPartialFirstLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls-s")
	var text []byte
	for i := range 500 {
		text = fmt.Appendf(text, "%016x\n", i)
	}
	require.NoError(t, os.WriteFile(path, text, 0o644))
	got := readRing(path)
	require.NotEmpty(t, got)
	for _, fp := range got {
		assert.Len(t, fp, 16, "a whole fingerprint")
	}
	assert.Equal(t, fmt.Sprintf("%016x", 499), got[len(got)-1])
	assert.Nil(t, readRing(filepath.Join(t.TempDir(), "none")))
}
