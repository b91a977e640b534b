package lock

import (
	"fmt"
	"os"
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
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return ""
	}
	data, err := os.ReadFile("/proc/locks") // (procfs: not a file the agent can replace)
	if err != nil {
		return ""
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		// "1: FLOCK  ADVISORY  WRITE 4242 fe:00:9979093 0 EOF"; a waiter's
		// line has "->" after the number.
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil || pid <= 0 {
			continue
		}
		who := "held by pid " + f[4]
		if cmd, err := os.ReadFile("/proc/" + f[4] + "/cmdline"); err == nil && len(cmd) > 0 {
			line := strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))
			if len(line) > 100 {
				line = line[:100] + "…"
			}
			who += ": " + line
		}
		return who
	}
	return ""
}
