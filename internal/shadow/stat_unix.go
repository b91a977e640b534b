//go:build linux || darwin || freebsd || netbsd

package shadow

import (
	"os"
	"syscall"

	"github.com/harness-agent/harness/internal/filetime"
)

// statData is fi as an index entry holds it: ctime and mtime (seconds,
// nanoseconds), device, inode, mode (git's: mode), uid, gid and size, each
// cut to 32 bits as git cuts them. ok is false where the platform's stat
// does not say them all.
func statData(fi os.FileInfo, mode uint32) (sd [10]uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return sd, false
	}
	ctime, mtime := filetime.Of(st)
	return [10]uint32{
		uint32(ctime.Sec), uint32(ctime.Nsec), uint32(mtime.Sec), uint32(mtime.Nsec),
		uint32(st.Dev), uint32(st.Ino), mode, st.Uid, st.Gid, uint32(st.Size),
	}, true
}
