package guard

import (
	"strings"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/shellscan"
)

// StoredCommand judges a command stored for the harness to run later (a
// task's validation or on_failure.cleanup) by the rules a Bash call of the
// agent meets: session_config.allowed_commands, and no write the guard is
// sure touches a harness file. A policy the project set cannot be
// side-stepped by handing the harness the command instead. It returns why
// the command is refused, "" when it may be stored. dir is the state root,
// cwd where the command will run.
func StoredCommand(dir, cwd, command string) string {
	if strings.TrimSpace(command) == "" {
		return ""
	}
	c := &call{Project: project.Open(dir), cwd: cwd, tool: "Bash"}
	rep := shellscan.Analyze(command, cwd)
	if d, denied := c.commandPolicy(rep); denied {
		return reasonOf(d)
	}
	for _, w := range rep.Writes {
		if name, exact := c.bashHit(w); name != "" && exact {
			return "harness [bash-state-files]: `" + w.Op + "` writes " + name + ": a stored command may not touch harness files (the harness puts them back and fails the attempt with [TAMPER])."
		}
	}
	return ""
}

// reasonOf is a denial's reason without its "Instead:" advice.
func reasonOf(d hook.Decision) string {
	r, _, _ := strings.Cut(d.Reason, "\nInstead:")
	return r
}
