package quiet

import (
	"path"
	"slices"
	"strconv"
	"syscall"

	"github.com/harness-agent/harness/internal/digest"
)

// off reports whether a hook following rule finds nothing to act on for
// the payload doc, with its environment read through env.
//
// The hook resolves each place to its physical path (filepath.EvalSymlinks
// after a lexical clean) and looks in it and its parents; here the kernel
// resolves the cleaned path (an O_PATH open) and names it
// (/proc/self/fd), the same directory by the same rules, and a parent of a
// path free of links is the physical parent either way.
func off(rule Rule, doc []byte, env func(string) string) bool {
	stateRoot, projectDir, ok := envPlaces(env)
	if !ok {
		return false
	}
	name := tasksFile
	if rule == Switched {
		name = activeMarker
	}
	if stateRoot != "" {
		real, found, ok := realPath(path.Clean(stateRoot))
		if !ok || found && present(path.Join(real, name)) != absent {
			return false
		}
	}
	// Each place is looked at as soon as it is resolved (quiet.go says in
	// which order): in a project, the first look finds it.
	var starts, dirs []string // resolved: every place, and every directory looked in
	look := func(start string) bool {
		// root.Find cleans a path before it resolves its links (a link's
		// ".." is then the link's own directory); integrity.Root's look
		// at the record resolves the path as given (its ".." is the
		// target's parent). Both are looked at.
		for _, s := range []string{path.Clean(start), start} {
			if slices.Contains(starts, s) {
				continue
			}
			starts = append(starts, s)
			real, found, ok := realPath(s)
			if !ok {
				return false
			}
			if !found {
				continue // the hook cannot resolve it either, and skips it
			}
			for d := real; !slices.Contains(dirs, d); d = path.Dir(d) {
				dirs = append(dirs, d)
				if present(path.Join(d, name)) != absent {
					return false
				}
				if d == "/" {
					break
				}
			}
		}
		return true
	}
	if projectDir != "" && !look(projectDir) {
		return false
	}
	cwd, certain := member(doc, "cwd")
	if !certain || cwd != "" && cwd[0] == '/' && !look(cwd) {
		return false
	}
	wd, err := syscall.Getwd()
	if err != nil || !look(wd) {
		return false
	}
	if rule == Known {
		return !recordKnows(dirs, env)
	}
	return true
}

// recordKnows reports whether the record may know a project in one of
// dirs: a mark in the record directory of any of them (record.Dir), or a
// question no system call answered plainly.
func recordKnows(dirs []string, env func(string) string) bool {
	base := env("HARNESS_RECORD_DIR")
	if base == "" {
		state := env("XDG_STATE_HOME")
		if state == "" {
			home := env("HOME")
			if home == "" {
				return false // record.Base: no state directory to name
			}
			state = path.Join(home, ".local", "state")
		}
		base = path.Join(state, "harness", "records")
	}
	switch present(base) {
	case absent:
		return false // no record of any project
	case unknown:
		return true
	}
	for _, d := range dirs {
		sum := digest.SHA256([]byte(d))
		if present(path.Join(base, hexString(sum[:8]), markFile)) != absent {
			return true
		}
	}
	return false
}

// oPath is O_PATH (the syscall package does not name it): a descriptor
// that only names the file, which needs no permission to read it.
const oPath = 0x200000

type presence int

const (
	absent presence = iota
	there
	unknown // the system call failed otherwise than for a missing entry
)

// present lstats name.
func present(name string) presence {
	var st syscall.Stat_t
	switch err := syscall.Lstat(name, &st); err {
	case nil:
		return there
	case syscall.ENOENT, syscall.ENOTDIR:
		return absent
	default:
		return unknown
	}
}

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

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

// hexString is encoding/hex's lower-case text of b, which record.Dir names
// a record by (encoding/hex links fmt).
func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
