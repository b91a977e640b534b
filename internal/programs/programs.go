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

// Hook is one hook executable as its main (hooks/<event>/main.go) wires
// it: the event it answers, the function that decides, and the rule of
// internal/quiet its main imports (a test holds the two equal).
type Hook struct {
	Event  string
	Decide func(hook.Payload) hook.Decision
	Rule   quiet.Rule
}

// Hooks are the hook executables by name.
var Hooks = map[string]Hook{
	"harness-session-start":         {hook.SessionStart, sessionhook.SessionStart, quiet.Settled},
	"harness-pre-tool-use":          {hook.PreToolUse, guard.Check, quiet.Switched},
	"harness-stop":                  {hook.Stop, sessionhook.Stop, quiet.Ended},
	"harness-subagent-stop":         {hook.SubagentStop, sessionhook.SubagentStop, quiet.Switched},
	"harness-teammate-idle":         {hook.TeammateIdle, sessionhook.TeammateIdle, quiet.Switched},
	"harness-session-end":           {hook.SessionEnd, sessionhook.SessionEnd, quiet.Rooted},
	"harness-user-prompt-submit":    {hook.UserPromptSubmit, sessionhook.UserPromptSubmit, quiet.Settled},
	"harness-post-tool-use":         {hook.PostToolUse, guard.After, quiet.Known},
	"harness-post-tool-use-failure": {hook.PostToolUseFailure, guard.After, quiet.Known},
	"harness-pre-compact":           {hook.PreCompact, sessionhook.PreCompact, quiet.Switched},
	"harness-stop-failure":          {hook.StopFailure, sessionhook.StopFailure, quiet.Switched},
	"harness-config-change":         {hook.ConfigChange, sessionhook.ConfigChange, quiet.Switched},
}

// Mains maps executable names to entry points returning the exit code:
// the harness command and every hook of Hooks.
var Mains = func() map[string]func() int {
	mains := map[string]func() int{"harness": func() int { return cli.Main(os.Args[1:]) }}
	for name, h := range Hooks {
		mains[name] = h.main
	}
	return mains
}()

// main is the hook program's main: its rule of internal/quiet, then
// hook.Main. The rule runs here after every package is initialised, where
// in the hook's own executable it runs before them; what it decides is the
// same. The session start reads HEAD as its main sets it to.
func (h Hook) main() int {
	if quiet.Off(h.Rule) {
		return 0
	}
	if h.Event == hook.SessionStart {
		sessionhook.ReadHead = gitobj.HeadLine
	}
	return hook.Main(h.Event, h.Decide)
}

// Run runs the named program and returns its exit code.
func Run(name string) int { return Mains[name]() }
