//go:build !windows

package statecache

import (
	"fmt"
	"os"
	"syscall"
)

// fileID names the file itself (device and inode): a file replaced by
// another of the same size and time is still a change.
func fileID(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return ""
}
