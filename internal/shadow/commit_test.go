package shadow

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The commits and refs the hook writes itself are git's own: git hashes the
// same text to the same id, fsck finds nothing wrong, and log reads them.
func TestCommitsWrittenInProcessAreGits(t *testing.T) {
	dir := project(t)
	for i := range 3 {
		write(t, dir, "n.txt", fmt.Sprint(i))
		saved, err := Save(dir, fmt.Sprintf("Bash: step %d", i))
		require.NoError(t, err)
		require.True(t, saved)
	}
	r, err := open(dir)
	require.NoError(t, err)
	out, err := r.git(nil, "fsck", "--strict", "--no-progress")
	require.NoError(t, err, out)
	ps, err := List(dir)
	require.NoError(t, err)
	require.Len(t, ps, 3)
	for i, p := range ps {
		body, err := r.git(nil, "cat-file", "commit", p.Commit)
		require.NoError(t, err)
		again, err := r.git([]byte(body+"\n"), "hash-object", "-t", "commit", "--stdin")
		require.NoError(t, err)
		assert.Equal(t, p.Commit, again, "git hashes the commit's text to its id")
		assert.Equal(t, fmt.Sprintf("Bash: step %d", 2-i), p.Message)
		assert.WithinDuration(t, time.Now(), p.Time, time.Minute)
		assert.True(t, strings.HasPrefix(body, "tree "), body)
	}
}
