//go:build linux || darwin || freebsd || netbsd

package quiet

import (
	"path"
	"slices"
	"strconv"
	"syscall"

	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/filetime"
)

// off reports whether a hook following rule finds nothing to act on for
// the payload doc, with its environment read through env.
//
// The hook resolves each place to its physical path (filepath.EvalSymlinks
// after a lexical clean) and looks in it and its parents; here realPath
// resolves it (on Linux the kernel: an O_PATH open, named by /proc/self/fd;
// elsewhere only a path free of links, which is its own physical path),
// the same directory by the same rules, and a parent of a path free of
// links is the physical parent either way.
func off(rule Rule, doc []byte, env func(string) string) bool {
	return offBy(realPath, rule, doc, env)
}

// offBy is off with each place resolved by resolve (realPath: the kernel's
// answer on Linux, realPathByLinks elsewhere; the tests try both here).
func offBy(resolve func(string) (real string, found, ok bool), rule Rule, doc []byte, env func(string) string) bool {
	stateRoot, projectDir, ok := envPlaces(env)
	if !ok {
		return false
	}
	name := tasksFile
	if rule == Switched {
		name = activeMarker
	}
	// A tasks file found where root.Find looks first (the state root set,
	// $CLAUDE_PROJECT_DIR and its parents, then the payload's cwd and its
	// parents) is in the state root the hook acts on: there a Known hook
	// ends when the check after the last tool call kept its judgement, and
	// nothing it rests on moved (judged), a Settled one where there is
	// nothing to settle (settledOff).
	foundRoot := func(dir string) bool {
		if rule != Known && rule != Settled && rule != Ended {
			return false
		}
		base := recordBase(env)
		if base == "" || base[0] != '/' {
			return false // no record to read, or one named relative to this process
		}
		rec := recordDir(base, dir)
		switch rule {
		case Known:
			return judged(dir, rec, env)
		case Settled:
			return settledOff(dir, rec)
		}
		return turnEnded(dir, rec, doc, env)
	}
	if stateRoot != "" {
		real, found, ok := resolve(path.Clean(stateRoot))
		if !ok {
			return false
		}
		if found && present(path.Join(real, name)) != absent {
			return foundRoot(real)
		}
	}
	// Each place is looked at as soon as it is resolved (quiet.go says in
	// which order): in a project, the first look finds it.
	var starts, dirs []string // resolved: every place, and every directory looked in
	var rootAt string         // where a look found name, when root.Find would find it there
	look := func(start string, first bool) bool {
		// root.Find cleans a path before it resolves its links (a link's
		// ".." is then the link's own directory); integrity.Root's look
		// at the record resolves the path as given (its ".." is the
		// target's parent). Both are looked at.
		for i, s := range []string{path.Clean(start), start} {
			if slices.Contains(starts, s) {
				continue
			}
			starts = append(starts, s)
			real, found, ok := resolve(s)
			if !ok {
				return false
			}
			if !found {
				continue // the hook cannot resolve it either, and skips it
			}
			depth := 0
			for d := real; !slices.Contains(dirs, d); d = path.Dir(d) {
				dirs = append(dirs, d)
				if present(path.Join(d, name)) != absent {
					if first && i == 0 && depth < maxParents {
						rootAt = d
					}
					return false
				}
				if d == "/" {
					break
				}
				depth++
			}
		}
		return true
	}
	if projectDir != "" && !look(projectDir, true) {
		return rootAt != "" && foundRoot(rootAt)
	}
	cwd, certain := member(doc, "cwd")
	if !certain {
		return false
	}
	// The payload's cwd is the next place root.Find looks when the hook
	// takes it: a directory (hook.Payload.Cwd).
	if cwd != "" && cwd[0] == '/' && !look(cwd, isDir(cwd)) {
		return rootAt != "" && foundRoot(rootAt)
	}
	wd, err := syscall.Getwd()
	if err != nil || !look(wd, false) {
		return false
	}
	if rule == Known {
		return !recordKnows(dirs, env)
	}
	return true
}

// recordBase is the directory holding every project's record, as
// record.Base names it; "" when no state directory can be named.
func recordBase(env func(string) string) string {
	if base := env("HARNESS_RECORD_DIR"); base != "" {
		return base
	}
	state := env("XDG_STATE_HOME")
	if state == "" {
		home := env("HOME")
		if home == "" {
			return ""
		}
		state = path.Join(home, ".local", "state")
	}
	return path.Join(state, "harness", "records")
}

// recordDir is the record directory of the state root dir under base, as
// record.Dir names it.
func recordDir(base, dir string) string {
	sum := digest.SHA256([]byte(dir))
	return path.Join(base, hexString(sum[:8]))
}

// recordKnows reports whether the record may know a project in one of
// dirs: a mark in the record directory of any of them (record.Dir), or a
// question no system call answered plainly.
func recordKnows(dirs []string, env func(string) string) bool {
	base := recordBase(env)
	if base == "" {
		return false // record.Base: no state directory to name
	}
	switch present(base) {
	case absent:
		return false // no record of any project
	case unknown:
		return true
	}
	for _, d := range dirs {
		if present(path.Join(recordDir(base, d), markFile)) != absent {
			return true
		}
	}
	return false
}

// judged reports whether the record of the state root dir (its directory
// rec) keeps a judgement, made in this session by the check after a tool call, that
// the project's files are as the harness left them (integrity.AfterTool,
// record.Judged), and every file it rests on still has the stat it had
// then: the check would find the same again, and the hook do nothing.
// The text is the integrity package's: a format line, the root, the
// session, a line "PATH<tab>STAT" for each file ("-" for none; a stat is
// record.Stamp's text of lstat(2)'s answer), then "--".
func judged(dir, rec string, env func(string) string) bool {
	text, ok := readSmall(path.Join(rec, judgedFile))
	if !ok {
		return false
	}
	head := judgedFormat + "\nroot " + dir + "\nsession " + env("CLAUDE_CODE_SESSION_ID") + "\n"
	if len(text) < len(head) || string(text[:len(head)]) != head {
		return false
	}
	text = text[len(head):]
	for len(text) > 0 {
		end := indexByte(text, '\n')
		if end < 0 {
			return false
		}
		line := text[:end]
		text = text[end+1:]
		if string(line) == "--" {
			return len(text) == 0
		}
		tab := indexByte(line, '\t')
		if tab <= 0 || line[0] != '/' || statText(string(line[:tab])) != string(line[tab+1:]) {
			return false
		}
	}
	return false // no end: not a judgement
}

// settledOff reports whether the state root dir, root.Find's, is switched
// off with nothing for SessionStart or UserPromptSubmit to settle: its
// tasks file a regular file (root.Find takes no other), no marker, the
// record's mark not active (or no record at all: integrity.SettleOff has
// nothing to change), and the runtime directory none or a directory
// (root.OwnRuntimeDir has no link to replace).
func settledOff(dir, rec string) bool {
	var st syscall.Stat_t
	if syscall.Stat(path.Join(dir, tasksFile), &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return false
	}
	if !offAndOwn(dir) {
		return false
	}
	mark := path.Join(rec, markFile)
	text, ok := readSmall(mark)
	if !ok {
		return present(mark) == absent
	}
	active, certain := memberText(text, "active")
	return certain && string(active) == "false"
}

// offAndOwn reports whether the state root dir has no marker, and no
// link in its runtime directory's place for root.OwnRuntimeDir to replace
// (none, or a directory).
func offAndOwn(dir string) bool {
	if present(path.Join(dir, activeMarker)) != absent {
		return false
	}
	var st syscall.Stat_t
	switch err := syscall.Lstat(path.Join(dir, runtimeDir), &st); err {
	case syscall.ENOENT:
		return true
	case nil:
		return st.Mode&syscall.S_IFMT == syscall.S_IFDIR
	}
	return false
}

// turnEnded reports whether the Stop hook has nothing to do at this turn's
// end in the state root dir, root.Find's, switched off (a finished run, a
// person's switching off): no marker and no link for root.OwnRuntimeDir
// (offAndOwn); its check would find the files as the check after the last
// tool call of this session found them (judged); the log is as the record
// last compared it whole (its log stamp, integrity.logSince); and the
// session's runtime asks for no reflection round (none, not finished, or
// its rounds done: sessionhook.reflection).
func turnEnded(dir, rec string, doc []byte, env func(string) string) bool {
	if !offAndOwn(dir) || !judged(dir, rec, env) {
		return false
	}
	if !logCompared(path.Join(rec, logStampFile), path.Join(dir, progressFile)) {
		return false
	}
	session, certain := member(doc, "session_id")
	if !certain || !plainID(session) {
		return false
	}
	runtime := path.Join(rec, sessionsDir, runtimePrefix+session+".json")
	text, ok := readSmall(runtime)
	if !ok {
		return present(runtime) == absent
	}
	finished, fok := memberText(text, "finished")
	done, dok := memberText(text, "reflect_done")
	return fok && dok && (finished == nil || string(finished) == "false" || string(done) == "true")
}

// logCompared reports whether the log at logPath has the stamp the
// record's note at stampPath gives (record.Record.LogStamp: size,
// modification time, inode, change time, each in twenty digits), or there
// is no note: integrity.logSince then compares nothing.
func logCompared(stampPath, logPath string) bool {
	text, ok := readSmall(stampPath)
	if !ok {
		return present(stampPath) == absent
	}
	var want [4]int64
	for i := range want {
		end := byte(' ')
		if i == len(want)-1 {
			end = '\n'
		}
		if len(text) < 21 || text[20] != end {
			return false
		}
		v, err := strconv.ParseInt(string(text[:20]), 10, 64)
		if err != nil {
			return false
		}
		want[i], text = v, text[21:]
	}
	var st syscall.Stat_t
	if len(text) != 0 || syscall.Stat(logPath, &st) != nil {
		return false
	}
	size, mtime, ctime, ino := stampOf(&st)
	return want == [4]int64{size, mtime, ino, ctime}
}

// stampOf is what record.StampOf keeps of a file's status: its size, its
// modification and change times in nanoseconds, its inode.
func stampOf(st *syscall.Stat_t) (size, mtime, ctime, ino int64) {
	c, m := filetime.Of(st)
	return int64(st.Size), int64(m.Sec)*1e9 + int64(m.Nsec), int64(c.Sec)*1e9 + int64(c.Nsec), int64(st.Ino)
}

// plainID reports whether a session id names its runtime file as it is
// (root.SessionFileIn; any other is hashed there, and left to the hook).
func plainID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '.' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// isDir reports whether name is a directory, links followed.
func isDir(name string) bool {
	var st syscall.Stat_t
	return syscall.Stat(name, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR
}

// statText is the text a judgement keeps of name's stat: record.Stamp's
// "size:mtime:ctime:inode" (nanoseconds) of lstat(2), "-" where there is
// no such file, "?" where the system call failed otherwise (no kept text
// is that).
func statText(name string) string {
	var st syscall.Stat_t
	switch err := syscall.Lstat(name, &st); err {
	case nil:
	case syscall.ENOENT:
		return "-"
	default:
		return "?"
	}
	size, mtime, ctime, ino := stampOf(&st)
	b := make([]byte, 0, 80)
	for i, v := range [...]int64{size, mtime, ctime, ino} {
		if i > 0 {
			b = append(b, ':')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return string(b)
}

// judgedLimit bounds what judged reads: a judgement names eight files.
const judgedLimit = 16 << 10

// readSmall reads the regular file name whole, when it is under
// judgedLimit; ok is false otherwise (not there, a link, too long, a
// read that failed).
func readSmall(name string) (data []byte, ok bool) {
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	buf := make([]byte, 4096)
	n := 0
	for {
		if n == len(buf) {
			if len(buf) >= judgedLimit {
				return nil, false
			}
			buf = append(buf, make([]byte, len(buf))...)
		}
		got, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if got == 0 {
			return buf[:n], true
		}
		n += got
	}
}

// indexByte is bytes.IndexByte: this package imports nothing past the
// runtime's packages and syscall (bytes brings unicode), so that its
// subpackages end a hook before the rest is initialised (quiet.go).
func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

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
