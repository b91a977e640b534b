//go:build !windows

package wiring

import (
	"fmt"
	"os"
	"syscall"
)

// statKey is what must stay the same for a file to be taken as unchanged:
// size, modification and change time, inode. The change time cannot be
// set back by hand (touch -d sets only the modification time).
func statKey(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("%d:%d", fi.Size(), fi.ModTime().UnixNano())
	}
	return fmt.Sprintf("%d:%d:%d:%d", fi.Size(), fi.ModTime().UnixNano(), ctimeNs(st), st.Ino)
}
