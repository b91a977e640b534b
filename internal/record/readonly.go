package record

import (
	"errors"
	"os"
	"syscall"
)

// ReadOnly reports whether this process is kept from writing root's
// record by the system: its directory is on a read-only file system
// (EROFS: bubblewrap's read-only binds) or the write is not permitted
// (EPERM: Seatbelt). That is the agent's commands
// inside Claude Code's sandbox with `harness install --sandbox`. A
// permission problem of the ordinary kind (EACCES) is not that: it is a
// broken set-up, which the record's best-effort writes already survive.
//
// It writes a probe file, so it is asked only where something moved, off
// the hooks' fast path.
func ReadOnly(root string) bool {
	dir := Dir(root)
	if dir == "" {
		return false
	}
	f, err := os.CreateTemp(dir, ".harness-probe-*")
	if err == nil {
		f.Close()
		os.Remove(f.Name())
		return false
	}
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EPERM)
}
