//go:build !linux && !windows

package workers

import "syscall"

func dieWithParent(*syscall.SysProcAttr) {}
