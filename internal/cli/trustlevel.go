package cli

import (
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/settings"
)

// trustLevel is the level of trust `harness status` reports.
type trustLevel settings.Trust

// trustLevelOf reads the level in force for the project at dir from the
// settings Claude Code merges there (the launch directory when a session runs the
// command, else dir).
func trustLevelOf(dir string) trustLevel { return trustLevel(project.Open(dir).Trust()) }

// String is the status line: "trust: sandboxed (…)" or "trust: standard (…)".
func (t trustLevel) String() string {
	if t.Level == settings.Sandboxed {
		return "trust: sandboxed (the agent's commands run in Claude Code's sandbox, and the project's commands the harness runs in one of its own, the record read-only in both)"
	}
	return "trust: standard (" + t.Why + "; changes to the harness files are detected and put back; `harness install --sandbox` makes them impossible)"
}
