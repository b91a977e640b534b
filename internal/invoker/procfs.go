package invoker

import (
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
)

// ProcFS reads processes from a Linux /proc tree: stat for the parent and
// the short name, cmdline and environ for the rest.
type ProcFS struct{ FS fs.FS }

// maxProcFile bounds what is read of one cmdline or environ file.
const maxProcFile = 1 << 20

// Proc reads pid. Its stat must be readable; cmdline and environ are nil
// when they are not (another user's process keeps its environment to
// itself).
func (t ProcFS) Proc(pid int) (Proc, error) {
	dir := strconv.Itoa(pid)
	stat, err := t.read(dir + "/stat")
	if err != nil {
		return Proc{}, err
	}
	p, err := parseStat(stat)
	if err != nil {
		return Proc{}, err
	}
	if p.PID != pid {
		return Proc{}, fmt.Errorf("/proc/%d/stat names pid %d", pid, p.PID)
	}
	if b, err := t.read(dir + "/cmdline"); err == nil {
		p.Args = split0(b)
	}
	if b, err := t.read(dir + "/environ"); err == nil {
		p.Env = split0(b)
	}
	return p, nil
}

func (t ProcFS) read(name string) ([]byte, error) {
	f, err := t.FS.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxProcFile))
}

// parseStat reads "pid (comm) state ppid …". comm may hold spaces and
// parentheses: it ends at the last ')'.
func parseStat(b []byte) (Proc, error) {
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 1 || end < open {
		return Proc{}, fmt.Errorf("unreadable stat %q", s)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return Proc{}, fmt.Errorf("unreadable stat %q", s)
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 2 {
		return Proc{}, fmt.Errorf("unreadable stat %q", s)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return Proc{}, fmt.Errorf("unreadable stat %q", s)
	}
	return Proc{PID: pid, PPID: ppid, Comm: s[open+1 : end]}, nil
}

// split0 splits NUL-terminated strings.
func split0(b []byte) []string {
	s := strings.TrimRight(string(b), "\x00")
	if s == "" {
		return []string{}
	}
	return strings.Split(s, "\x00")
}
