//go:build windows

package validation

import (
	"os"
	"os/exec"
)

// shell is the program validation and cleanup commands run with, as
// `shell -c COMMAND`: Git for Windows' bash (see gitBash), else an sh on
// PATH (MSYS2, Cygwin, BusyBox), which then fails to start with a clear
// error when there is none. cmd.exe and PowerShell are never used: the
// state file's commands are POSIX shell.
func shell() string {
	exists := func(p string) bool { fi, err := os.Stat(p); return err == nil && !fi.IsDir() }
	if p := gitBash(os.Getenv, exec.LookPath, exists); p != "" {
		return p
	}
	return "sh"
}
