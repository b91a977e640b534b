//go:build linux || openbsd || dragonfly

package filetime

import "syscall"

// Of is st's change and modification times.
func Of(st *syscall.Stat_t) (change, modify syscall.Timespec) { return st.Ctim, st.Mtim }
