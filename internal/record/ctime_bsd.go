//go:build darwin || freebsd || netbsd

package record

import "syscall"

func ctime(st *syscall.Stat_t) (sec, nsec int64) {
	return int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec)
}
