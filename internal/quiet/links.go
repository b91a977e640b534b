//go:build linux || darwin || freebsd || netbsd

package quiet

import (
	"path"
	"syscall"
)

// realPathByLinks is name resolved where no symbolic link lies on its way:
// each step of it lstat'ed from the root down, as the kernel walks it. A
// path free of links is its own physical path, the one
// filepath.EvalSymlinks gives the hook. found is false where a step is
// missing (or not a directory); ok is false where a step is a link, where
// the path climbs (a "..", which the kernel takes after the link before
// it and EvalSymlinks lexically), or where a system call failed otherwise:
// the hook then decides.
func realPathByLinks(name string) (real string, found, ok bool) {
	if name == "" || name[0] != '/' {
		return "", false, false
	}
	for i := 0; i < len(name); {
		j := i + 1
		for j < len(name) && name[j] != '/' {
			j++
		}
		if name[i+1:j] == ".." {
			return "", false, false
		}
		i = j
	}
	real = path.Clean(name)
	var st syscall.Stat_t
	for i := 1; i <= len(real); i++ {
		if i < len(real) && real[i] != '/' {
			continue
		}
		switch err := syscall.Lstat(real[:i], &st); err {
		case nil:
		case syscall.ENOENT, syscall.ENOTDIR:
			return "", false, true
		default:
			return "", false, false
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
			return "", false, false
		}
	}
	return real, true, true
}
