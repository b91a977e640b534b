//go:build !windows

package programs

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/harness-agent/harness/internal/lock"
)

func init() { commands["mergelock"] = cmdMergeLock }

// heldMergeLocks are the merge-queue locks scenarios hold, by state root.
var heldMergeLocks sync.Map

// cmdMergeLock: mergelock DIR holds the merge queue's lock of the state
// root DIR (as another integration would) until `mergelock -release DIR`.
func cmdMergeLock(ts *testscript.TestScript, neg bool, args []string) {
	release := len(args) == 2 && args[0] == "-release"
	if release {
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mergelock [-release] DIR")
	}
	dir := ts.MkAbs(args[0])
	if release {
		f, ok := heldMergeLocks.LoadAndDelete(dir)
		if !ok {
			ts.Fatalf("mergelock: %s is not held", dir)
		}
		f.(*os.File).Close()
		return
	}
	path := filepath.Join(ts.Getenv("HARNESS_LOCK_DIR"), "harness-"+lock.Hash(dir)+".merge")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	ts.Check(err)
	ts.Check(syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	heldMergeLocks.Store(dir, f)
	ts.Defer(func() { f.Close() })
}
