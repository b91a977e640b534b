// Package programs maps every harness executable's name to its entry point,
// exactly as the thin mains under hooks/ call it (each main imports only its
// own package, to start fast), so the process-level scenarios run what a
// user runs.
package programs

import (
	"os"

	"github.com/harness-agent/harness/internal/cli"
	"github.com/harness-agent/harness/internal/gitobj"
	"github.com/harness-agent/harness/internal/guard"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/quiet"
	"github.com/harness-agent/harness/internal/sessionhook"
)

// Mains maps executable names to entry points returning the exit code.
var Mains = map[string]func() int{
	"harness": func() int { return cli.Main(os.Args[1:]) },
	"harness-session-start": func() int {
		sessionhook.ReadHead = gitobj.HeadLine
		return run(quiet.Rooted, hook.SessionStart, sessionhook.SessionStart)
	},
	"harness-pre-tool-use":  func() int { return run(quiet.Switched, hook.PreToolUse, guard.Check) },
	"harness-stop":          func() int { return run(quiet.Rooted, hook.Stop, sessionhook.Stop) },
	"harness-subagent-stop": func() int { return run(quiet.Switched, hook.SubagentStop, sessionhook.SubagentStop) },
	"harness-teammate-idle": func() int { return run(quiet.Switched, hook.TeammateIdle, sessionhook.TeammateIdle) },
	"harness-session-end":   func() int { return run(quiet.Rooted, hook.SessionEnd, sessionhook.SessionEnd) },
	"harness-user-prompt-submit": func() int {
		return run(quiet.Rooted, hook.UserPromptSubmit, sessionhook.UserPromptSubmit)
	},
	"harness-post-tool-use":         func() int { return run(quiet.Known, hook.PostToolUse, guard.After) },
	"harness-post-tool-use-failure": func() int { return run(quiet.Known, hook.PostToolUseFailure, guard.After) },
	"harness-pre-compact":           func() int { return run(quiet.Switched, hook.PreCompact, sessionhook.PreCompact) },
	"harness-stop-failure":          func() int { return run(quiet.Switched, hook.StopFailure, sessionhook.StopFailure) },
	"harness-config-change":         func() int { return run(quiet.Switched, hook.ConfigChange, sessionhook.ConfigChange) },
}

// run is a hook's main: the rule of internal/quiet its main imports, then
// hook.Main. The rule runs here after every package is initialised, where
// in the hook's own executable it runs before them; what it decides is the
// same.
func run(rule quiet.Rule, event string, fn func(hook.Payload) hook.Decision) int {
	if quiet.Off(rule) {
		return 0
	}
	return hook.Main(event, fn)
}

// Run runs the named program and returns its exit code.
func Run(name string) int { return Mains[name]() }
