//go:build !windows

package shadow

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a session of its own, so it outlives the hook
// without holding Claude Code's view of the hook's process group.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
