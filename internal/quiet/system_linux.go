package quiet

import (
	"path"
	"strconv"
	"syscall"
)

// realPath is name with its links resolved by the kernel; found is false
// when it does not exist, ok false when the kernel could not say.
func realPath(name string) (real string, found, ok bool) {
	fd, err := syscall.Open(name, oPath|syscall.O_CLOEXEC, 0)
	if err == syscall.ENOENT || err == syscall.ENOTDIR {
		return "", false, true
	}
	if err != nil {
		return "", false, false
	}
	defer syscall.Close(fd)
	buf := make([]byte, 4096)
	n, err := syscall.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf)
	if err != nil || n <= 0 || n >= len(buf) || buf[0] != '/' {
		return "", false, false
	}
	real = string(buf[:n])
	if hasSuffix(real, " (deleted)") || path.Clean(real) != real {
		return "", false, false
	}
	return real, true, true
}

// oPath is O_PATH (the syscall package does not name it): a descriptor
// that only names the file, which needs no permission to read it.
const oPath = 0x200000

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}
