package guard

import "github.com/harness-agent/harness/internal/hook"

// escapeField is the Bash tool's input member asking Claude Code to run the
// command outside its OS sandbox (the pinned CLI's tool schema).
const escapeField = "tool_input.dangerouslyDisableSandbox"

// sandboxEscape refuses a Bash call that asks to run outside the sandbox:
// the sandbox is what keeps the agent's commands off the record, the
// harness's executables and the settings, and a command let out of it
// could rewrite them. With allowUnsandboxedCommands false Claude Code
// ignores the request itself; the refusal also holds where the user's
// settings leave the escape open, and tells the model why.
func (c *call) sandboxEscape() (hook.Decision, bool) {
	if c.tool != "Bash" || !c.p.Get(escapeField).Bool() {
		return hook.Decision{}, false
	}
	return deny("sandbox",
		"this command asks to run outside Claude Code's sandbox (dangerouslyDisableSandbox: true) while the harness is active; the sandbox keeps commands off the harness's record, executables and settings",
		"run the command without dangerouslyDisableSandbox; if the sandbox blocks something the task needs, say what and let the user run it (`harness fail ID --category ENV_SETUP \"…\"` when the task cannot go on)"), true
}
