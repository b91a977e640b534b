//go:build windows

package validation

import (
	"os/exec"
	"strconv"
	"syscall"
)

// groupAttr starts the command in a new process group (Windows has no
// process groups to signal; the tree is killed by taskkill below).
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killGroup kills the command and every process it started.
func killGroup(pid int) error {
	return exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid)).Run()
}
