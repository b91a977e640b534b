package lock

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// holder names the process that holds the flock on the file at path, as
// the kernel lists it in /proc/locks ("held by pid 4242: python3 hold.py"),
// "" when none is found: a lock still held past its wait says who holds
// it, in the error a verb prints and the WARN line a check logs.
func holder(path string) string {
	pid := holderPID(path)
	if pid <= 0 {
		return ""
	}
	who := "held by pid " + strconv.Itoa(pid)
	if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && len(cmd) > 0 {
		line := strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))
		if len(line) > 100 {
			line = line[:100] + "…"
		}
		who += ": " + line
	}
	return who
}

// HeldByHarness reports whether the flock on the file at path is held by
// a process running one of the harness's executables (a verb, a hook):
// one whose executable lies in this process's own directory, where the
// harness installs them all. Another holder (a script of the agent's, a
// copy of the harness elsewhere) is not one, nor is a lock no one holds.
func HeldByHarness(path string) bool {
	pid := holderPID(path)
	if pid <= 0 {
		return false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false
	}
	self, err := os.Executable()
	if err != nil {
		return false
	}
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	return filepath.Dir(exe) == filepath.Dir(self)
}

// holderPID is the process holding the flock on the file at path, as
// /proc/locks lists it, 0 when none is found.
func holderPID(path string) int {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return 0
	}
	data, err := os.ReadFile("/proc/locks") // (procfs: not a file the agent can replace)
	if err != nil {
		return 0
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		// "1: FLOCK  ADVISORY  WRITE 4242 fe:00:9979093 0 EOF"; a waiter's
		// line has "->" after the number.
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}
