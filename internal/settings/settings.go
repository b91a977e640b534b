// Package settings registers the harness hooks in a Claude Code settings.json
// and removes them again, touching nothing else.
//
// A settings file belongs to its user: their other keys and hooks, the order
// of their keys and their indentation must all survive. So every edit is made
// to the text, one value at a time, in the file's own indentation and line
// endings, and the bytes outside the edited value never change; registering
// twice changes nothing the second time. Unregistering after registering
// gives back the original bytes, except that a file the harness created is
// deleted again, an empty (or blank) file comes back as {}, and a "hooks"
// object or event list the user had written empty goes with our last entry
// in it.
//
// A key written twice in the part of the file we read is refused: Claude
// Code keeps the last one, gjson finds the first, and an edit would land
// where Claude Code does not look.
//
// Our entries are recognised by the program a hook command runs (one of the
// hook executables), not by its directory: when the binaries move, the
// entries are updated in place instead of gaining a second, stale set.
package settings

import (
	"path/filepath"
	"runtime"
	"strings"
)

// Hook is one registration of a harness hook executable.
type Hook struct {
	Event   string // the Claude Code hook event
	Matcher string // "" for events that take no matcher
	Program string // the executable's name, as scripts/build.sh builds it
	Timeout int    // seconds
}

// Hooks lists every harness hook, in the order they are written.
//
// The timeouts bound what each hook may do: SessionStart may run the
// project's harness-init.sh; PreToolUse runs before every tool call and must
// stay fast; Stop may run validation commands to re-verify completed tasks;
// SessionEnd only releases the lock (Claude Code gives SessionEnd hooks 1.5 s
// unless a timeout is set).
var Hooks = []Hook{
	{Event: "SessionStart", Matcher: "startup|resume|clear|compact|fork", Program: "harness-session-start", Timeout: 120},
	{Event: "PreToolUse", Matcher: "*", Program: "harness-pre-tool-use", Timeout: 30},
	{Event: "Stop", Program: "harness-stop", Timeout: 300},
	{Event: "SubagentStop", Program: "harness-subagent-stop", Timeout: 60},
	{Event: "TeammateIdle", Program: "harness-teammate-idle", Timeout: 60},
	{Event: "SessionEnd", Program: "harness-session-end", Timeout: 5},
	{Event: "UserPromptSubmit", Program: "harness-user-prompt-submit", Timeout: 10},
	{Event: "PostToolUse", Matcher: "*", Program: "harness-post-tool-use", Timeout: 30},
	{Event: "PostToolUseFailure", Matcher: "*", Program: "harness-post-tool-use-failure", Timeout: 30},
	{Event: "PreCompact", Program: "harness-pre-compact", Timeout: 30},
	{Event: "StopFailure", Program: "harness-stop-failure", Timeout: 30},
	{Event: "ConfigChange", Matcher: "user_settings|project_settings|local_settings", Program: "harness-config-change", Timeout: 10},
}

// hookFor returns the registration of program, or nil when it is not ours.
func hookFor(program string) *Hook {
	for i := range Hooks {
		if Hooks[i].Program == program {
			return &Hooks[i]
		}
	}
	return nil
}

// Command is the hook command that runs program from binDir: an absolute
// path, single-quoted for the shell when it holds anything but plain
// characters. On Windows, where Claude Code runs hook commands with Git
// Bash, it names program.exe with forward slashes (C:/Users/…/harness-stop.exe),
// which that shell reads as it is.
func Command(binDir, program string) string {
	path := filepath.Join(binDir, program)
	if runtime.GOOS == "windows" {
		path = filepath.ToSlash(path) + ".exe"
	}
	return Quote(path)
}

// ExecForm reports whether an entry of ours with command is registered in
// Claude Code's exec form (an empty "args" list beside it): run as it is,
// without a shell, whose start cost every hook call about a millisecond.
// A command quoted for the shell stays in the shell form, as do the
// commands of Windows, where Claude Code runs them with Git Bash.
func ExecForm(command string) bool {
	return runtime.GOOS != "windows" && command != "" && Quote(command) == command
}

// Program returns the name of the executable a hook command runs: the base
// name of its first shell word, without a Windows .exe.
func Program(command string) string {
	w := firstWord(command)
	if w == "" {
		return ""
	}
	return strings.TrimSuffix(filepath.Base(w), ".exe")
}

// Executable returns the path of the executable a hook command runs: its
// first shell word, quotes removed.
func Executable(command string) string { return firstWord(command) }

// IsOurs reports whether a hook command runs one of the harness hooks.
func IsOurs(command string) bool { return hookFor(Program(command)) != nil }

const plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+:@%,="

// Quote returns s as one shell word: as it is when it holds only plain
// characters, else in single quotes.
func Quote(s string) string {
	if s != "" && strings.Trim(s, plain) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// firstWord returns the first word of a shell command with its quotes and
// escapes removed. It understands what Quote writes and what people
// write by hand: 'single', "double" and backslash-escaped characters.
func firstWord(cmd string) string {
	cmd = strings.TrimLeft(cmd, " \t\n")
	// A word without quotes or escapes (what an install writes for a
	// path of plain characters) is the command's own bytes: every hook's
	// wiring check reads each registered command this way.
	if i := strings.IndexAny(cmd, " \t\n;&|\\'\""); i < 0 {
		return cmd
	} else if c := cmd[i]; c != '\\' && c != '\'' && c != '"' {
		return cmd[:i]
	}
	var b strings.Builder
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|':
			return b.String()
		case c == '\\' && i+1 < len(cmd):
			i++
			b.WriteByte(cmd[i])
		case c == '\'':
			end := strings.IndexByte(cmd[i+1:], '\'')
			if end < 0 {
				return b.String() + cmd[i+1:]
			}
			b.WriteString(cmd[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			for i++; i < len(cmd) && cmd[i] != '"'; i++ {
				if cmd[i] == '\\' && i+1 < len(cmd) && strings.IndexByte(`"\$`+"`", cmd[i+1]) >= 0 {
					i++
				}
				b.WriteByte(cmd[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
