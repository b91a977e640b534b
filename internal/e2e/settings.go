package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Hook is one command hook registration for HookSettings.
type Hook struct {
	// Event is the hook event: "PreToolUse", "Stop", "SessionStart", ...
	Event string
	// Matcher selects tools (PreToolUse/PostToolUse) or sources
	// (SessionStart); empty means all. Events without matchers ignore it.
	Matcher string
	// Command is the shell command to run, typically an absolute path.
	Command string
	// Timeout in seconds; 0 leaves the CLI default.
	Timeout int
}

// HookSettings builds a settings.json value registering hooks, in the shape
// documented in CLAUDE_CODE_FACTS.md:
//
//	{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/x"}]}]}}
//
// Hooks of the same event and matcher share one matcher group.
func HookSettings(hooks ...Hook) map[string]any {
	type group struct {
		Matcher string           `json:"matcher,omitempty"`
		Hooks   []map[string]any `json:"hooks"`
	}
	byEvent := map[string][]*group{}
	for _, h := range hooks {
		var g *group
		for _, existing := range byEvent[h.Event] {
			if existing.Matcher == h.Matcher {
				g = existing
			}
		}
		if g == nil {
			g = &group{Matcher: h.Matcher}
			byEvent[h.Event] = append(byEvent[h.Event], g)
		}
		entry := map[string]any{"type": "command", "command": h.Command}
		if h.Timeout > 0 {
			entry["timeout"] = h.Timeout
		}
		g.Hooks = append(g.Hooks, entry)
	}
	out := map[string]any{}
	for ev, gs := range byEvent {
		out[ev] = gs
	}
	return map[string]any{"hooks": out}
}

// WriteSettings writes settings to home/.claude/settings.json (the user
// settings file). A []byte or string is written verbatim, anything else is
// JSON-encoded.
func WriteSettings(t testing.TB, home string, settings any) string {
	t.Helper()
	var data []byte
	switch v := settings.(type) {
	case []byte:
		data = v
	case string:
		data = []byte(v)
	default:
		var err error
		data, err = json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatalf("e2e: encoding settings: %v", err)
		}
	}
	path := filepath.Join(home, ".claude", "settings.json")
	writeFile(t, path, data, 0o644)
	return path
}

// WriteScript writes an executable shell script (a "#!/bin/sh" line is
// prepended) into dir and returns its path: handy for one-off hook fixtures.
func WriteScript(t testing.TB, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	writeFile(t, path, []byte("#!/bin/sh\n"+body), 0o755)
	return path
}

// WriteSkill installs a skill as home/.claude/skills/<name>/SKILL.md with the
// given frontmatter description and body, the way `npx skills add -g` would.
func WriteSkill(t testing.TB, home, name, description, body string) string {
	t.Helper()
	desc, _ := json.Marshal(description) // a JSON string is valid YAML
	path := filepath.Join(home, ".claude", "skills", name, "SKILL.md")
	writeFile(t, path, []byte("---\nname: "+name+"\ndescription: "+string(desc)+"\n---\n\n"+body), 0o644)
	return path
}

func writeFile(t testing.TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}
