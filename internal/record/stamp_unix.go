//go:build !windows

package record

import (
	"os"
	"syscall"

	"github.com/harness-agent/harness/internal/filetime"
)

// sysStamp is fi's inode and status-change time.
func sysStamp(fi os.FileInfo) (ino, ctimeNs int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	c, _ := filetime.Of(st)
	return int64(st.Ino), int64(c.Sec)*1e9 + int64(c.Nsec)
}
