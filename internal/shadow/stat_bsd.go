//go:build darwin || freebsd || netbsd

package shadow

import "syscall"

// statTimes is a file's change and modification times, as macOS and the
// BSDs name them.
func statTimes(st *syscall.Stat_t) (ctime, mtime syscall.Timespec) { return st.Ctimespec, st.Mtimespec }
