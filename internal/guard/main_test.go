package guard

import (
	"os"
	"testing"
)

// TestMain keeps the records the guard writes (the shadow checkpoints
// among them) out of the user's state directory.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "guard-records-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HARNESS_RECORD_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
