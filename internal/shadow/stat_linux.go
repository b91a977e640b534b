package shadow

import "syscall"

// statTimes is a file's change and modification times, as Linux names them.
func statTimes(st *syscall.Stat_t) (ctime, mtime syscall.Timespec) { return st.Ctim, st.Mtim }
