package validation

import (
	"path/filepath"
	"strings"
)

// gitBash finds the bash of Git for Windows, the shell Claude Code itself
// runs its Bash tool with on Windows, so a validation command means there
// what it means to the agent that wrote it. In order: the path Claude Code is
// told with CLAUDE_CODE_GIT_BASH_PATH, the bash beside the git on PATH
// (<git>\cmd\git.exe or <git>\bin\git.exe → <git>\bin\bash.exe), Git's
// default install directory. A bash found only on PATH is taken last and
// never the one in System32, which starts WSL rather than Git Bash. It
// returns "" when there is none; the caller then falls back to sh on PATH.
// Written over injected lookups so it is tested on every platform.
func gitBash(getenv func(string) string, lookPath func(string) (string, error), exists func(string) bool) string {
	if p := getenv("CLAUDE_CODE_GIT_BASH_PATH"); p != "" && exists(p) {
		return p
	}
	if git, err := lookPath("git"); err == nil {
		root := filepath.Dir(filepath.Dir(git))
		if p := filepath.Join(root, "bin", "bash.exe"); exists(p) {
			return p
		}
	}
	for _, env := range []string{"ProgramFiles", "ProgramW6432"} {
		if dir := getenv(env); dir != "" {
			if p := filepath.Join(dir, "Git", "bin", "bash.exe"); exists(p) {
				return p
			}
		}
	}
	if p, err := lookPath("bash"); err == nil && !strings.Contains(strings.ToLower(p), "system32") {
		return p
	}
	return ""
}
