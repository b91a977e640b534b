//go:build !windows

package validation

import (
	"errors"
	"syscall"
)

// groupAttr starts the command in a process group of its own, so that
// everything it starts can be killed with it.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the command's whole process group.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
