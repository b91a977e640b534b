package sessionhook

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/settings"
	"github.com/harness-agent/harness/internal/wiring"
)

// ConfigChange is Claude Code's ConfigChange hook: a settings file changed
// while a session runs. A change that would take the harness's own checks
// out of the running session (its hooks unregistered, disableAllHooks, the
// sandbox `harness install --sandbox` set turned off) is kept from it: the
// hook blocks, so the session goes on with the settings it started with,
// says why to the person, and logs a TAMPER line. The file on disk stays
// changed; the next session starts with it, and its SessionStart says
// what is miswired. A person changes the harness's wiring between sessions,
// with `harness install`.
func ConfigChange(p hook.Payload) hook.Decision {
	c, ok := active(p)
	if !ok {
		return hook.Decision{}
	}
	dir := c.Root
	file := p.Str("file_path")
	var why []string
	if file != "" {
		if doc, err := safefile.ReadFile(file, safefile.Small); err == nil {
			if undone := settings.SandboxUndone(file, doc); undone != "" {
				why = append(why, "it turns off the sandbox `harness install --sandbox` set ("+undone+")")
			}
		}
	}
	// Only what settings decide counts here; the executables are the other
	// hooks' to check.
	w := wiringWhere(c.Project, c.cwd())
	w.Registered = !fromPlugin()
	w.Verdict = "" // a settings file has just changed: every one is read
	for _, problem := range wiring.Check(w) {
		if strings.Contains(problem, "disableAllHooks") || strings.Contains(problem, "are registered in none") {
			why = append(why, problem)
		}
	}
	if len(why) == 0 {
		return hook.Decision{}
	}
	what := "the settings change in " + orUnnamed(file) + " (" + orUnnamed(p.Str("source")) + ") is not applied to this session: " + strings.Join(why, "; ")
	progress.Append(dir, progress.Entry{Session: progress.LastSession(dir), Type: progress.Tamper, Message: "hooks " + what})
	reason := "HARNESS: " + what + ". The harness's hooks and sandbox stay as the session started. Do not change Claude Code's settings; a person changes the harness's wiring between sessions with `harness install`."
	return hook.Decision{Kind: hook.Block, Reason: reason, Warning: "harness: " + what}
}

// fromPlugin reports whether this hook runs from a plugin (its executable
// in the plugin's bin/, beside hooks/hooks.json), whose hooks no settings
// file registers.
func fromPlugin() bool {
	exe, err := os.Executable()
	if err != nil {
		return true
	}
	_, err = os.Stat(filepath.Join(filepath.Dir(filepath.Dir(exe)), "hooks", "hooks.json"))
	return err == nil
}

func orUnnamed(s string) string {
	if s == "" {
		return "an unnamed file"
	}
	return s
}
