package invoker

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// proc is one process of a fake /proc tree.
type proc struct {
	pid, ppid int
	comm      string
	args, env []string
	noEnv     bool // environ unreadable (another user's process)
}

// fakeProc lays procs out as Linux's /proc does.
func fakeProc(procs ...proc) ProcFS {
	fsys := fstest.MapFS{}
	for _, p := range procs {
		dir := itoa(p.pid)
		fsys[dir+"/stat"] = &fstest.MapFile{Data: []byte(dir + " (" + p.comm + ") S " + itoa(p.ppid) + " 1 1 0 -1 4194304 1 0 0 0\n")}
		fsys[dir+"/cmdline"] = &fstest.MapFile{Data: []byte(join0(p.args))}
		if !p.noEnv {
			fsys[dir+"/environ"] = &fstest.MapFile{Data: []byte(join0(p.env))}
		}
	}
	return ProcFS{FS: fsys}
}

func itoa(n int) string { return strconv.Itoa(n) }

func join0(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return strings.Join(s, "\x00") + "\x00"
}

// The ancestry walk: what makes a process a session's, and where the walk
// stops.
func TestWalk(t *testing.T) {
	initProc := proc{pid: 1, ppid: 0, comm: "systemd", args: []string{"/sbin/init"}, env: []string{"HOME=/"}}
	sshd := proc{pid: 300, ppid: 1, comm: "sshd", args: []string{"sshd: me@pts/0"}, noEnv: true}
	login := proc{pid: 400, ppid: 300, comm: "bash", args: []string{"-bash"}, env: []string{"HOME=/home/me", "TERM=xterm"}}
	claudeNative := proc{pid: 500, ppid: 400, comm: "claude", args: []string{"claude", "--continue"}, env: []string{"HOME=/home/me"}}
	agentShell := proc{pid: 600, ppid: 500, comm: "bash", args: []string{"/bin/bash", "-c", "env -u CLAUDE_CODE_SESSION_ID harness cancel"},
		env: []string{"CLAUDE_CODE_SESSION_ID=abc", "CLAUDECODE=1", "CLAUDE_PID=500"}}
	for _, tc := range []struct {
		name    string
		procs   []proc
		ppid    int
		opts    Options
		session string // a substring of Session, "" for none
		limit   string
	}{
		{name: "a person's login shell", procs: []proc{initProc, sshd, login}, ppid: 400},
		{name: "an agent's shell carries the session", procs: []proc{initProc, sshd, login, claudeNative, agentShell}, ppid: 600,
			session: "ancestor 600 bash has CLAUDE_CODE_SESSION_ID"},
		{name: "env -i under Claude Code: the claude process itself", procs: []proc{initProc, sshd, login, claudeNative,
			{pid: 600, ppid: 500, comm: "sh", args: []string{"sh", "-c", "x"}, env: []string{}}}, ppid: 600,
			session: "ancestor 500 claude is Claude Code"},
		{name: "node running the npm package", procs: []proc{initProc,
			{pid: 50, ppid: 1, comm: "node", args: []string{"node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"}, env: []string{}},
			{pid: 60, ppid: 50, comm: "python3", args: []string{"python3", "x.py"}, env: []string{}}}, ppid: 60,
			session: "ancestor 50 node is Claude Code"},
		{name: "the native installer's versioned executable", procs: []proc{initProc,
			{pid: 50, ppid: 1, comm: "2.1.330", args: []string{"/home/me/.local/share/claude/versions/2.1.330"}, env: []string{}}}, ppid: 50,
			session: "is Claude Code"},
		{name: "CLAUDECODE=1 alone", procs: []proc{initProc, {pid: 70, ppid: 1, comm: "zsh", args: []string{"zsh"}, env: []string{"CLAUDECODE=1"}}}, ppid: 70,
			session: "has CLAUDECODE=1"},
		{name: "CLAUDECODE=0 is not a session", procs: []proc{initProc, {pid: 70, ppid: 1, comm: "zsh", args: []string{"zsh"}, env: []string{"CLAUDECODE=0", "CLAUDE_CODE_SESSION_ID="}}}, ppid: 70},
		{name: "CLAUDE_PID of an ancestor", procs: []proc{initProc, {pid: 70, ppid: 1, comm: "make", args: []string{"make"}, env: []string{"CLAUDE_PID=9"}}}, ppid: 70,
			session: "has CLAUDE_PID"},
		{name: "comm with spaces and parentheses", procs: []proc{initProc, {pid: 80, ppid: 1, comm: "a) (b c", args: []string{"x"}, env: []string{}},
			{pid: 81, ppid: 80, comm: ") S 1 (", args: []string{"y"}, env: []string{"CLAUDE_CODE_SESSION_ID=s"}}}, ppid: 81,
			session: "ancestor 81 ) S 1 ( has CLAUDE_CODE_SESSION_ID"},
		{name: "a shell agent holding the lock by hand", procs: []proc{initProc, sshd, login}, ppid: 400, opts: Options{Holders: []int{400}},
			session: "ancestor 400 bash holds the session lock"},
		{name: "holder pid 1 is ignored", procs: []proc{initProc, sshd, login}, ppid: 400, opts: Options{Holders: []int{1}}},
		{name: "the boundary hides what is above it", procs: []proc{initProc, sshd, login, claudeNative, agentShell,
			{pid: 700, ppid: 600, comm: "programs.test", args: []string{"programs.test"}, env: []string{}},
			{pid: 800, ppid: 700, comm: "sh", args: []string{"sh"}, env: []string{}}}, ppid: 800, opts: Options{Stop: 700}},
		{name: "below the boundary the session is seen", procs: []proc{initProc, sshd, login,
			{pid: 700, ppid: 400, comm: "programs.test", args: []string{"programs.test"}, env: []string{}},
			{pid: 800, ppid: 700, comm: "sh", args: []string{"sh"}, env: []string{"CLAUDE_CODE_SESSION_ID=s"}}}, ppid: 800, opts: Options{Stop: 700},
			session: "ancestor 800 sh has CLAUDE_CODE_SESSION_ID"},
		{name: "the boundary as the parent: named, not judged", procs: []proc{initProc,
			{pid: 700, ppid: 1, comm: "claude", args: []string{"claude"}, env: []string{"CLAUDE_CODE_SESSION_ID=s"}}}, ppid: 700, opts: Options{Stop: 700}},
		{name: "reparented to init", procs: []proc{initProc}, ppid: 1},
		{name: "an ancestor that vanished", procs: []proc{initProc, {pid: 90, ppid: 89, comm: "sh", args: []string{"sh"}, env: []string{}}}, ppid: 90,
			limit: "ancestor 89 could not be read"},
		{name: "another user's environment unreadable", procs: []proc{initProc, sshd, login}, ppid: 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Walk(fakeProc(tc.procs...), tc.ppid, tc.opts)
			if tc.ppid == tc.opts.Stop {
				assert.Empty(t, got.Session, "the boundary itself is not judged")
			}
			if tc.session == "" {
				assert.Empty(t, got.Session)
			} else {
				assert.Contains(t, got.Session, tc.session)
			}
			assert.Equal(t, tc.ppid, got.Parent.PID, "the parent, for the log")
			assert.Equal(t, tc.limit, got.Limit)
		})
	}
}

// A chain deeper than the bound is a session: nesting shells must not hide
// the Claude Code process above them.
func TestWalkTooDeep(t *testing.T) {
	procs := []proc{{pid: 1, comm: "init"}, {pid: 2, ppid: 1, comm: "claude", args: []string{"claude"}}}
	for pid := 3; pid < MaxDepth+10; pid++ {
		procs = append(procs, proc{pid: pid, ppid: pid - 1, comm: "sh", args: []string{"sh"}, env: []string{}})
	}
	got := Walk(fakeProc(procs...), MaxDepth+9, Options{})
	assert.Contains(t, got.Session, "more than")
	got = Walk(fakeProc(procs...), 40, Options{})
	assert.Contains(t, got.Session, "ancestor 2 claude is Claude Code")
}

// A cycle in a broken tree ends at the bound, as a session.
func TestWalkCycle(t *testing.T) {
	got := Walk(fakeProc(proc{pid: 5, ppid: 6, comm: "a"}, proc{pid: 6, ppid: 5, comm: "b"}), 5, Options{})
	assert.Contains(t, got.Session, "more than")
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Proc
		bad  bool
	}{
		{in: "42 (bash) S 41 42 42 34816", want: Proc{PID: 42, PPID: 41, Comm: "bash"}},
		{in: "42 (my (weird) prog) R 7 1 1", want: Proc{PID: 42, PPID: 7, Comm: "my (weird) prog"}},
		{in: "42 (a b) S 1", want: Proc{PID: 42, PPID: 1, Comm: "a b"}},
		{in: "42 (x) S", bad: true},
		{in: "42 x S 1", bad: true},
		{in: "(x) S 1 2", bad: true},
		{in: "42 (x) S one", bad: true},
		{in: "", bad: true},
	} {
		got, err := parseStat([]byte(tc.in))
		if tc.bad {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

// A stat file naming another pid is not taken for the process asked for.
func TestProcFSPidMismatch(t *testing.T) {
	fsys := ProcFS{FS: fstest.MapFS{"5/stat": &fstest.MapFile{Data: []byte("6 (x) S 1")}}}
	_, err := fsys.Proc(5)
	assert.Error(t, err)
}

func TestProcArgs(t *testing.T) {
	raw := append([]byte{3, 0, 0, 0}, []byte("/usr/local/bin/node\x00\x00\x00\x00node\x00/opt/@anthropic-ai/claude-code/cli.js\x00-p\x00CLAUDECODE=1\x00HOME=/Users/me\x00\x00\x00")...)
	args, env := procArgs(raw)
	assert.Equal(t, []string{"node", "/opt/@anthropic-ai/claude-code/cli.js", "-p"}, args)
	assert.Equal(t, []string{"CLAUDECODE=1", "HOME=/Users/me"}, env)
	for _, bad := range [][]byte{nil, {1, 0}, {1, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff, 'x', 0}} {
		a, e := procArgs(bad)
		assert.Empty(t, a)
		assert.Empty(t, e)
	}
}

func TestHow(t *testing.T) {
	assert.Equal(t, "by a terminal (pid 1234, tty /dev/pts/3), no Claude Code ancestor",
		Invoker{PID: 1234, Terminal: true, TTY: "/dev/pts/3"}.How(""))
	assert.Equal(t, "without a terminal (--yes), no Claude Code ancestor (pid 1234, parent 77 cron)",
		Invoker{PID: 1234, Parent: Proc{PID: 77, Comm: "cron"}}.How("--yes"))
	assert.Equal(t, "without a terminal, no Claude Code ancestor (pid 9, parent unknown); ancestors not read on plan9",
		Invoker{PID: 9, Limit: "ancestors not read on plan9"}.How(""))
	assert.Equal(t, "by a terminal (pid 5), inside a Claude Code session: ancestor 2 claude is Claude Code",
		Invoker{PID: 5, Terminal: true, Session: "ancestor 2 claude is Claude Code"}.How(""))
}

// /dev/null is a character device, not a terminal.
func TestDevNullIsNoTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer f.Close()
	ok, _ := terminal(f)
	assert.False(t, ok)
}

// This process's own environment is read first: a session variable there
// is a session, whatever the ancestors.
func TestDetectOwnEnvironment(t *testing.T) {
	t.Setenv("CLAUDECODE", "")
	t.Setenv("CLAUDE_PID", "")
	t.Setenv("CLAUDE_CODE_SESSION_ID", "s-1")
	assert.Equal(t, "its environment has CLAUDE_CODE_SESSION_ID", Detect(Options{Stop: os.Getppid()}).Session)
	t.Setenv("CLAUDE_CODE_SESSION_ID", "")
	assert.Empty(t, Detect(Options{Stop: os.Getppid()}).Session, "the walk stops at the test's parent")
}

// Detect runs once per person-only verb (never in a hook): a walk of this
// process's real ancestry, a handful of small /proc reads per ancestor.
func BenchmarkDetect(b *testing.B) {
	for b.Loop() {
		Detect(Options{})
	}
}
