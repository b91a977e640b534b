//go:build unix

package main

import (
	"os"
	"syscall"
)

// faults is the page faults of the process p, minor and major: what it
// touched of its memory and of its executable for the first time.
func faults(p *os.ProcessState) int64 {
	if u, ok := p.SysUsage().(*syscall.Rusage); ok {
		return int64(u.Minflt) + int64(u.Majflt)
	}
	return 0
}
