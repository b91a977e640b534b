// Package failure names the protocol's error categories and renders errors the
// way every harness tool reports them: one grep-able line
// "ERROR [CATEGORY] what happened", then "hint: what to do next".
package failure

import (
	"fmt"
	"strings"
)

// The error categories of the protocol, as they appear in logs and error_log.
const (
	EnvSetup       = "ENV_SETUP"
	Config         = "CONFIG"
	TaskExec       = "TASK_EXEC"
	TestFail       = "TEST_FAIL"
	Timeout        = "TIMEOUT"
	Dependency     = "DEPENDENCY"
	SessionTimeout = "SESSION_TIMEOUT"
	Usage          = "USAGE"
	Tamper         = "TAMPER"
	Scope          = "SCOPE"
)

// Categories lists every category an agent may record with `harness fail`.
var Categories = []string{EnvSetup, Config, TaskExec, TestFail, Timeout, Dependency, SessionTimeout}

// Error is a categorised failure with an optional hint for the reader.
type Error struct {
	Category string
	Message  string
	Hint     string
}

func (e *Error) Error() string { return fmt.Sprintf("ERROR [%s] %s", e.Category, e.Message) }

// New returns an Error of the given category with a formatted message.
func New(category, format string, args ...any) *Error {
	return &Error{Category: category, Message: fmt.Sprintf(format, args...)}
}

// WithHint returns e with its hint set, for chaining at the call site.
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// Is reports whether err is a *Error of the given category.
func Is(err error, category string) bool {
	e, ok := err.(*Error)
	return ok && e.Category == category
}

// ShellArg quotes s as one POSIX shell word, for the commands printed in
// messages and hints that an agent copies and runs: a task id from a
// hand-edited file ("has space") must not split into two arguments. Plain
// words are returned as they are.
func ShellArg(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=+,:@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
