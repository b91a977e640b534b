//go:build darwin || freebsd || netbsd

package shadow

import (
	"os"
	"syscall"
)

// statData is fi as an index entry holds it: ctime and mtime (seconds,
// nanoseconds), device, inode, mode (git's: mode), uid, gid and size, each
// cut to 32 bits as git cuts them (stat_linux.go; these systems name the
// times apart).
func statData(fi os.FileInfo, mode uint32) (sd [10]uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return sd, false
	}
	return [10]uint32{
		uint32(st.Ctimespec.Sec), uint32(st.Ctimespec.Nsec), uint32(st.Mtimespec.Sec), uint32(st.Mtimespec.Nsec),
		uint32(st.Dev), uint32(st.Ino), mode, st.Uid, st.Gid, uint32(st.Size),
	}, true
}
