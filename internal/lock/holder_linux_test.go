package lock

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A lock still held past its wait says who holds it, as the kernel lists
// it: here this process, through another open of the file.
func TestHeldSaysWhoHoldsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := File(path, 0)
	require.NoError(t, err)
	defer unlock()
	_, err = File(path, 50*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "still held after 50ms (held by pid "+strconv.Itoa(os.Getpid())+": ")
	assert.Contains(t, err.Error(), filepath.Base(os.Args[0]))
	assert.Equal(t, "", holder(filepath.Join(t.TempDir(), "free.lock")), "a file no one locks")
}
