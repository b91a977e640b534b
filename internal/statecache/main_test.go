package statecache

import (
	"os"
	"testing"
)

// TestMain keeps the harness's record and transaction locks in a temporary
// directory of the test run instead of the user's home and /tmp.
func TestMain(m *testing.M) {
	os.Exit(isolated(m))
}

func isolated(m *testing.M) int {
	dir, err := os.MkdirTemp("", "harness-summary-test-")
	if err != nil {
		return 2
	}
	defer os.RemoveAll(dir)
	os.Setenv("HARNESS_RECORD_DIR", dir)
	os.Setenv("HARNESS_LOCK_DIR", dir)
	return m.Run()
}
