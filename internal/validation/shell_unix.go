//go:build !windows

package validation

// shell is the program validation and cleanup commands run with, as
// `shell -c COMMAND`: POSIX sh, as the state file's commands are written.
func shell() string { return "sh" }
