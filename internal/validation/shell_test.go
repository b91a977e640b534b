package validation

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGitBash: the shell chosen for validation commands on Windows, over
// injected lookups (paths in this platform's separators; the logic is the
// same).
func TestGitBash(t *testing.T) {
	p := filepath.FromSlash
	tests := []struct {
		name  string
		env   map[string]string
		path  map[string]string // program → where LookPath finds it
		files []string
		want  string
	}{
		{name: "nothing", want: ""},
		{name: "Claude Code's setting first",
			env:   map[string]string{"CLAUDE_CODE_GIT_BASH_PATH": p("/portable/bin/bash.exe")},
			path:  map[string]string{"git": p("/Git/cmd/git.exe")},
			files: []string{p("/portable/bin/bash.exe"), p("/Git/bin/bash.exe")},
			want:  p("/portable/bin/bash.exe")},
		{name: "a setting naming no file is passed over",
			env:   map[string]string{"CLAUDE_CODE_GIT_BASH_PATH": p("/gone/bash.exe")},
			path:  map[string]string{"git": p("/Git/cmd/git.exe")},
			files: []string{p("/Git/bin/bash.exe")},
			want:  p("/Git/bin/bash.exe")},
		{name: "beside the git on PATH",
			path:  map[string]string{"git": p("/Git/cmd/git.exe")},
			files: []string{p("/Git/bin/bash.exe")},
			want:  p("/Git/bin/bash.exe")},
		{name: "Git's default directory",
			env:   map[string]string{"ProgramFiles": p("/PF")},
			files: []string{p("/PF/Git/bin/bash.exe")},
			want:  p("/PF/Git/bin/bash.exe")},
		{name: "WSL's bash is not Git Bash",
			path: map[string]string{"bash": p("/Windows/System32/bash.exe")},
			want: ""},
		{name: "another bash on PATH, last",
			path: map[string]string{"bash": p("/msys64/usr/bin/bash.exe")},
			want: p("/msys64/usr/bin/bash.exe")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			lookPath := func(prog string) (string, error) {
				if where, ok := tt.path[prog]; ok {
					return where, nil
				}
				return "", errors.New("not found")
			}
			exists := func(f string) bool {
				for _, have := range tt.files {
					if have == f {
						return true
					}
				}
				return false
			}
			assert.Equal(t, tt.want, gitBash(getenv, lookPath, exists))
		})
	}
}
