// Package validation runs a task's objective check: a shell command, in a
// given directory, bounded in time, with its output kept.
//
// It exists so that "done" is never the agent's opinion. The same Run serves
// `harness validate`, recovery, the Stop hook's verification gate and the
// PreToolUse completion gate, so a command passes or fails the same way
// everywhere.
//
// What a caller may rely on: the command runs as `sh -c COMMAND` in its own
// process group, with stdin empty; when the time limit passes (or the caller's
// context ends) the whole group is killed, so a test runner's children die
// with it; whatever the group left running after a normal exit is killed too,
// so a validation never leaves processes behind. Output (stdout and stderr
// interleaved) is kept bounded: the beginning for finding the first error,
// the end for showing the agent.
package validation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Outcome is how a validation ended.
type Outcome int

const (
	Pass    Outcome = iota // exit status 0
	Fail                   // non-zero exit status
	Timeout                // killed at the time limit
	Missing                // the command's program is not installed: an ENV_SETUP problem, not the task's
)

func (o Outcome) String() string {
	switch o {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	case Timeout:
		return "TIMEOUT"
	case Missing:
		return "MISSING"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Result is what Run observed.
type Result struct {
	Outcome  Outcome
	ExitCode int // -1 when killed or never started
	// Tail is the end of the combined output (at most TailBytes, cut at a
	// line start when longer).
	Tail string
	// FirstLine is the most useful single line of the output for error_log:
	// the first line that looks like an error, else the last line, else a
	// description of how the command ended.
	FirstLine string
	Program   string // the program found missing, when Outcome is Missing
	// Unconfined says why a command that had to run confined could not
	// (Outcome Missing, nothing run): the sandbox could not be set up.
	Unconfined string
	Took       time.Duration
}

// Output bounds.
const (
	HeadBytes = 8 << 10  // kept from the start, to find the first error
	TailBytes = 16 << 10 // kept from the end, to show
)

// EnvSeconds reads a time limit from the environment variable name
// (HARNESS_INIT_TIMEOUT, HARNESS_VERIFY_BUDGET, HARNESS_GATE_BUDGET): whole
// seconds, or a Go duration such as 500ms; def when it is unset, unreadable
// or not positive.
func EnvSeconds(name string, def time.Duration) time.Duration {
	v := strings.TrimSpace(os.Getenv(name))
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d
	}
	return def
}

// WaitDelay bounds how long Run keeps reading output after the command ended
// and its process group was killed, when a process that left the group
// (setsid) still holds the output open.
var WaitDelay = 2 * time.Second

// Runner runs commands. Wrap, when set, turns the argument vector of a
// command into one that runs it confined (internal/confine); an error from
// it means the command cannot run confined, and it is not run at all.
type Runner struct {
	Wrap func(argv []string) ([]string, error)
}

// Run runs command with `sh -c` in dir, unconfined: Runner{}.Run.
func Run(ctx context.Context, dir, command string, timeout time.Duration) Result {
	return Runner{}.Run(ctx, dir, command, timeout)
}

// Run runs command with `sh -c` in dir, killing its process group after
// timeout (0: no limit other than ctx). A missing program is reported without
// running anything (see Check), and so is an exit status of 127, which is how
// the shell says a later command was not found. A command that cannot be
// confined as rn.Wrap asks is reported as Missing with Unconfined saying
// why, without running anything.
func (rn Runner) Run(ctx context.Context, dir, command string, timeout time.Duration) Result {
	start := time.Now()
	if prog, ok := Check(dir, command); !ok {
		return Result{Outcome: Missing, ExitCode: -1, Program: prog,
			FirstLine: fmt.Sprintf("%s: command not found", prog)}
	}
	argv := []string{shell(), "-c", command}
	if rn.Wrap != nil {
		var err error
		if argv, err = rn.Wrap(argv); err != nil {
			return Result{Outcome: Missing, ExitCode: -1, Program: "the sandbox", Unconfined: err.Error(),
				FirstLine: "not run: " + err.Error()}
		}
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()

	out := &capture{}
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.SysProcAttr = groupAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	// The command writes into a pipe we own rather than one exec copies
	// from, so Wait returns as soon as the shell exits, even when a
	// background job still holds the pipe open; the group is then killed.
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{Outcome: Fail, ExitCode: -1, FirstLine: err.Error(), Took: time.Since(start)}
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return Result{Outcome: Fail, ExitCode: -1, FirstLine: err.Error(), Took: time.Since(start)}
	}
	pw.Close()
	copied := make(chan struct{})
	go func() {
		io.Copy(out, pr)
		close(copied)
	}()
	err = cmd.Wait()
	killGroup(cmd.Process.Pid) // leftovers: background jobs of the command
	select {
	case <-copied:
	case <-time.After(WaitDelay):
		pr.Close() // held open outside the group (setsid); stop reading
		<-copied
	}
	pr.Close()
	r := Result{Took: time.Since(start), ExitCode: -1, Tail: out.tail()}
	var exit *exec.ExitError
	killed := errors.As(err, &exit) && exit.ExitCode() == -1
	switch {
	case err == nil:
		r.Outcome, r.ExitCode = Pass, 0
	case ctx.Err() != nil:
		r.Outcome = Fail
		r.FirstLine = "interrupted: " + ctx.Err().Error()
		return r
	case runCtx.Err() != nil && (killed || exit == nil):
		r.Outcome = Timeout
		r.FirstLine = fmt.Sprintf("killed after the %s time limit", seconds(timeout))
		return r
	case exit != nil:
		r.Outcome, r.ExitCode = Fail, exit.ExitCode()
	default:
		r.Outcome = Fail
		r.FirstLine = err.Error()
		return r
	}
	r.FirstLine = FirstUsefulLine(out.text())
	if r.Outcome == Fail && r.ExitCode == 127 {
		r.Outcome = Missing
		r.Program = missingProgram(out.text())
	}
	if r.FirstLine == "" && r.Outcome != Pass {
		r.FirstLine = fmt.Sprintf("exit status %d (no output)", r.ExitCode)
	}
	return r
}

// seconds renders a limit the way timeout_seconds states it.
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
	return d.String()
}

// capture keeps the first HeadBytes and the last TailBytes written to it.
type capture struct {
	head  []byte
	ring  []byte // the last TailBytes, in order after normalise
	total int64
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := HeadBytes - len(c.head); room > 0 {
		take := min(room, len(p))
		c.head = append(c.head, p[:take]...)
	}
	c.ring = append(c.ring, p...)
	if len(c.ring) > 2*TailBytes {
		c.ring = append(c.ring[:0:0], c.ring[len(c.ring)-TailBytes:]...)
	}
	return n, nil
}

// tail returns the last TailBytes, starting at a line boundary when cut.
// The output was cut when it is longer than what is returned; the ring
// alone can be exactly TailBytes long after Write trimmed it, cut
// mid-line.
func (c *capture) tail() string {
	t := c.ring
	if len(t) > TailBytes {
		t = t[len(t)-TailBytes:]
	}
	if int64(len(t)) < c.total {
		if i := strings.IndexByte(string(t), '\n'); i >= 0 && i+1 < len(t) {
			t = t[i+1:]
		}
	}
	return string(t)
}

// text is what FirstUsefulLine searches: the whole output when it fits, else
// its head and tail.
func (c *capture) text() string {
	if c.total <= int64(HeadBytes+TailBytes) && int64(len(c.ring)) == c.total {
		return string(c.ring)
	}
	return string(c.head) + "\n" + c.tail()
}

var (
	ansi = &lazyRegexp{pattern: `\x1b\[[0-9;?]*[ -/]*[@-~]`}
	// errorish matches the words test runners, compilers and shells use when
	// something went wrong.
	errorish = &lazyRegexp{pattern: `(?i)(error|fail|panic|fatal|exception|assert|traceback|not found|no such file|cannot|undefined|expected|mismatch|denied)`}
	// allClear matches summary lines that mention failure words with a zero.
	allClear = &lazyRegexp{pattern: `(?i)\b(0|no) (errors?|failures?|failed|failing)\b`}
)

// maxLine bounds FirstUsefulLine: it goes into error_log and log lines.
const maxLine = 200

// FirstUsefulLine picks the line of output that best says what went wrong:
// the first line that looks like an error, else the last non-blank line.
// Colour codes are removed and the line is cut to 200 bytes.
func FirstUsefulLine(output string) string {
	output = ansi.get().ReplaceAllString(output, "")
	var last string
	for _, l := range strings.Split(output, "\n") {
		l = strings.TrimSpace(strings.TrimRight(l, "\r"))
		if l == "" {
			continue
		}
		last = l
		if errorish.get().MatchString(l) && !allClear.get().MatchString(l) && !isBare(l) {
			return clip(l)
		}
	}
	return clip(last)
}

// isBare reports lines that carry a failure word and nothing else ("FAIL",
// "FAILED", "error"): the line before or after them says more.
func isBare(l string) bool {
	return !strings.ContainsAny(strings.Trim(l, "!.:-= "), " \t:")
}

func clip(s string) string {
	if len(s) <= maxLine {
		return s
	}
	cut := maxLine
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}

// notFound matches the shells' "command not found" messages: dash's
// "sh: 1: foo: not found", bash's "bash: foo: command not found".
var notFound = &lazyRegexp{pattern: `(?:^|\n)[^\n]*?:\s*([^\s:]+):\s*(?:command )?not found`}

func missingProgram(output string) string {
	if m := notFound.get().FindStringSubmatch(output); m != nil {
		return m[1]
	}
	return ""
}

// shellWord reports whether a word is a builtin or a keyword: a command
// that always exists, or one that starts a compound command whose real
// programs cannot be known without running it. Check does not look
// further than them.
func shellWord(name string) bool {
	switch name {
	case "!", "{", "(", "[", "[[", ":", ".", "if", "for", "while", "until", "case", "select",
		"function", "cd", "echo", "printf", "test", "true", "false", "exit", "export", "set", "unset",
		"eval", "exec", "command", "source", "read", "shift", "trap", "wait", "type", "ulimit", "umask",
		"return", "local", "readonly", "times", "kill", "pwd", "alias":
		return true
	}
	return false
}

// Program returns the program a command runs first: its first word after
// variable assignments. It returns "" when that cannot be known without a
// shell (an expansion, a compound command, a builtin).
func Program(command string) string {
	for _, w := range firstWords(command) {
		if isAssignment(w) {
			continue
		}
		if shellWord(w) || strings.ContainsAny(w, "$`*?[]{}()<>|;&\"'\\~") {
			return ""
		}
		return w
	}
	return ""
}

// Check reports whether the program command runs first exists: on PATH, or
// as a file relative to dir when it names a path. It is the protocol's
// "command -v <binary>" and answers ok when the program cannot be known
// (Program returns "").
func Check(dir, command string) (program string, ok bool) {
	prog := Program(command)
	if prog == "" {
		return "", true
	}
	if strings.Contains(prog, "/") {
		p := prog
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		_, err := os.Stat(p)
		return prog, err == nil
	}
	_, err := exec.LookPath(prog)
	return prog, err == nil
}

// firstWords splits the first simple command of command into words: spaces
// separate words, and an operator or a newline ends the command. Quoted words
// keep their quotes so Program can see they are not plain names.
func firstWords(command string) []string {
	var words []string
	var cur strings.Builder
	quote := byte(0)
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(command); i++ {
		ch := command[i]
		switch {
		case quote != 0:
			cur.WriteByte(ch)
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
			cur.WriteByte(ch)
		case ch == ' ' || ch == '\t':
			flush()
		case ch == '\n' || ch == ';' || ch == '&' || ch == '|':
			flush()
			return words
		case (ch == '(' || ch == '{') && cur.Len() == 0:
			words = append(words, string(ch))
			return words
		default:
			cur.WriteByte(ch)
		}
	}
	flush()
	return words
}

var assignment = &lazyRegexp{pattern: `^[A-Za-z_][A-Za-z0-9_]*=`}

func isAssignment(w string) bool { return assignment.get().MatchString(w) }

// lazyRegexp compiles its pattern on first use: every hook binary links
// this package, and most runs never look at a command's output. A value of
// it is laid out when the program is built, where a call at the package's
// initialisation (sync.OnceValue) would allocate at every hook's start.
type lazyRegexp struct {
	pattern string
	once    sync.Once
	re      *regexp.Regexp
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.pattern) })
	return l.re
}
