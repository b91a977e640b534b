//go:build !windows

package record

import (
	"os"
	"syscall"
)

// sysStamp is fi's inode and status-change time.
func sysStamp(fi os.FileInfo) (ino, ctimeNs int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	sec, nsec := ctime(st)
	return int64(st.Ino), sec*1e9 + nsec
}
