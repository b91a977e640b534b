package workers

import "syscall"

// dieWithParent has the kernel end a session whose supervisor died without
// stopping it (SIGKILL): a worker never outlives the supervisor that
// counts it.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
