package invoker

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// system is the process tree of this machine: sysctl.
func system() (Tree, string) { return sysctlTree{}, "" }

// sysctlTree reads processes with sysctl: kern.proc.pid for the parent and
// the short name, kern.procargs2 for the command line and the environment
// (readable for this user's processes only).
type sysctlTree struct{}

func (sysctlTree) Proc(pid int) (Proc, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return Proc{}, err
	}
	if int(kp.Proc.P_pid) != pid {
		return Proc{}, fmt.Errorf("no process %d", pid)
	}
	p := Proc{PID: pid, PPID: int(kp.Eproc.Ppid), Comm: unix.ByteSliceToString(kp.Proc.P_comm[:])}
	if raw, err := unix.SysctlRaw("kern.procargs2", pid); err == nil {
		p.Args, p.Env = procArgs(raw)
	}
	return p, nil
}
