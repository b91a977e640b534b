//go:build !windows

package guard

import (
	"os"
	"syscall"
)

// linked reports whether the file may have another name (a hard link).
func linked(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Nlink >= 2
}
