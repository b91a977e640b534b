//go:build darwin || freebsd || netbsd

package quiet

import "syscall"

// realPath is name where no link lies on its way (realPathByLinks): these
// kernels name no open directory's path the way Linux's /proc does, and a
// path with a link on it is left to the hook.
func realPath(name string) (real string, found, ok bool) { return realPathByLinks(name) }

// stampOf is what record.StampOf keeps of a file's status: its size, its
// modification and change times in nanoseconds, its inode.
func stampOf(st *syscall.Stat_t) (size, mtime, ctime, ino int64) {
	return st.Size, st.Mtimespec.Sec*1e9 + st.Mtimespec.Nsec, st.Ctimespec.Sec*1e9 + st.Ctimespec.Nsec, int64(st.Ino)
}
