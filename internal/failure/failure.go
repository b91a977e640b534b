// Package failure names the protocol's error categories and renders errors the
// way every harness tool reports them: one grep-able line
// "ERROR [CATEGORY] what happened", then "hint: what to do next".
package failure

import (
	"errors"
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
	// Merge is a task whose work passed in its worker's tree but could not
	// be integrated: its commits conflict with the integration branch, or
	// its validation or the integration check fails on the merged tree.
	Merge = "MERGE"
	// Review is an attempt whose validation passed but whose reviewer
	// (session_config.review, a task's review) found it does not do what
	// the task asks. Only the reviewer records it.
	Review = "REVIEW"
)

// Categories lists every category an agent may record with `harness fail`.
var Categories = []string{EnvSetup, Config, TaskExec, TestFail, Timeout, Dependency, SessionTimeout}

// Error is a categorised failure with an optional hint for the reader and
// the error it was caused by, if any. The message is for people; code asks
// errors.Is/As, which see the cause through Unwrap.
type Error struct {
	Category string
	Message  string
	Hint     string
	Cause    error
}

func (e *Error) Error() string { return fmt.Sprintf("ERROR [%s] %s", e.Category, e.Message) }

// Text is the error as the harness prints it: the ERROR line, then the
// hint line when there is a hint.
func (e *Error) Text() string {
	if e.Hint == "" {
		return e.Error()
	}
	return e.Error() + "\nhint: " + e.Hint
}

// Unwrap returns the cause, so errors.Is and errors.As see through e.
func (e *Error) Unwrap() error { return e.Cause }

// Wrap returns an Error of the given category caused by cause, with a
// formatted message (which usually says what cause means here).
func Wrap(category string, cause error, format string, args ...any) *Error {
	return &Error{Category: category, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// New returns an Error of the given category with a formatted message.
func New(category, format string, args ...any) *Error {
	return &Error{Category: category, Message: fmt.Sprintf(format, args...)}
}

// WithHint returns a copy of e with its hint set, for chaining at the call
// site; e itself (perhaps a shared sentinel) is left as it was.
func (e *Error) WithHint(format string, args ...any) *Error {
	c := *e
	c.Hint = fmt.Sprintf(format, args...)
	return &c
}

// Is reports whether err is, or wraps, a *Error of the given category.
func Is(err error, category string) bool {
	var e *Error
	return errors.As(err, &e) && e.Category == category
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
