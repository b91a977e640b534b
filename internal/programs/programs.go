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
		return run("harness-session-start", hook.SessionStart, sessionhook.SessionStart)
	},
	"harness-pre-tool-use":  func() int { return run("harness-pre-tool-use", hook.PreToolUse, guard.Check) },
	"harness-stop":          func() int { return run("harness-stop", hook.Stop, sessionhook.Stop) },
	"harness-subagent-stop": func() int { return run("harness-subagent-stop", hook.SubagentStop, sessionhook.SubagentStop) },
	"harness-teammate-idle": func() int { return run("harness-teammate-idle", hook.TeammateIdle, sessionhook.TeammateIdle) },
	"harness-session-end":   func() int { return run("harness-session-end", hook.SessionEnd, sessionhook.SessionEnd) },
	"harness-user-prompt-submit": func() int {
		return run("harness-user-prompt-submit", hook.UserPromptSubmit, sessionhook.UserPromptSubmit)
	},
	"harness-post-tool-use":         func() int { return run("harness-post-tool-use", hook.PostToolUse, guard.After) },
	"harness-post-tool-use-failure": func() int { return run("harness-post-tool-use-failure", hook.PostToolUseFailure, guard.After) },
	"harness-pre-compact":           func() int { return run("harness-pre-compact", hook.PreCompact, sessionhook.PreCompact) },
	"harness-stop-failure":          func() int { return run("harness-stop-failure", hook.StopFailure, sessionhook.StopFailure) },
	"harness-config-change":         func() int { return run("harness-config-change", hook.ConfigChange, sessionhook.ConfigChange) },
}

// Rules names the rule of internal/quiet each hook's main imports
// (hooks/<event>/main.go; a test holds the two equal).
var Rules = map[string]quiet.Rule{
	"harness-session-start":         quiet.Rooted,
	"harness-pre-tool-use":          quiet.Switched,
	"harness-stop":                  quiet.Rooted,
	"harness-subagent-stop":         quiet.Switched,
	"harness-teammate-idle":         quiet.Switched,
	"harness-session-end":           quiet.Rooted,
	"harness-user-prompt-submit":    quiet.Rooted,
	"harness-post-tool-use":         quiet.Known,
	"harness-post-tool-use-failure": quiet.Known,
	"harness-pre-compact":           quiet.Switched,
	"harness-stop-failure":          quiet.Switched,
	"harness-config-change":         quiet.Switched,
}

// run is the hook program's main: its rule of internal/quiet, then
// hook.Main. The rule runs here after every package is initialised, where
// in the hook's own executable it runs before them; what it decides is the
// same.
func run(program, event string, fn func(hook.Payload) hook.Decision) int {
	if rule, ok := Rules[program]; ok && quiet.Off(rule) {
		return 0
	}
	return hook.Main(event, fn)
}

// Run runs the named program and returns its exit code.
func Run(name string) int { return Mains[name]() }
