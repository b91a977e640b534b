package settings

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/jsonedit"
	"github.com/harness-agent/harness/internal/safefile"
)

const bin = "/home/u/.claude/harness/bin"

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return data
}

// indented re-encodes doc the way encoding/json indents with unit: a file
// written that way must stay exactly that way after our edits.
func indented(t *testing.T, doc []byte, unit string) []byte {
	t.Helper()
	var buf bytes.Buffer
	trimmed := bytes.TrimRight(doc, " \t\r\n")
	require.NoError(t, json.Indent(&buf, trimmed, "", unit))
	return append(buf.Bytes(), doc[len(trimmed):]...)
}

// ours returns the harness entries of doc as event → commands.
func ours(t *testing.T, doc []byte) map[string][]string {
	t.Helper()
	found, err := Parse(doc, "settings.json")
	require.NoError(t, err)
	out := map[string][]string{}
	for _, e := range found {
		out[e.Event] = append(out[e.Event], e.Command)
	}
	return out
}

// wantOurs is what a complete registration from dir looks like.
func wantOurs(dir string) map[string][]string {
	out := map[string][]string{}
	for _, h := range Hooks {
		out[h.Event] = []string{Command(dir, h.Program)}
	}
	return out
}

// commands lists every hook command of doc that is not ours, by event.
func userCommands(doc []byte) map[string][]string {
	out := map[string][]string{}
	gjson.GetBytes(doc, "hooks").ForEach(func(ev, groups gjson.Result) bool {
		for _, g := range groups.Array() {
			for _, h := range g.Get("hooks").Array() {
				if c := h.Get("command").String(); !IsOurs(c) {
					out[ev.Str] = append(out[ev.Str], g.Get("matcher").String()+" → "+c)
				}
			}
		}
		return true
	})
	return out
}

func TestRegister(t *testing.T) {
	full := fixture(t, "full.json")
	tests := []struct {
		name string
		doc  string
		unit string // when set, the output must be exactly json.Indent(output, unit)
		back string // what unregistering gives back, when not doc itself
	}{
		{name: "missing file", doc: ""},
		{name: "empty file", doc: "", unit: "  "},
		{name: "blank file", doc: " \n\n"},
		{name: "empty object", doc: "{}", unit: "  "},
		{name: "empty object with newline", doc: "{}\n", unit: "  "},
		{name: "one line", doc: `{"model":"opus","env":{"A":"1"}}`},
		{name: "two spaces", doc: string(indented(t, full, "  ")), unit: "  "},
		{name: "four spaces", doc: string(indented(t, full, "    ")), unit: "    "},
		{name: "tabs", doc: string(indented(t, full, "\t")), unit: "\t"},
		{name: "hand-written, user hooks of every kind", doc: string(full)},
		// Containers our entries leave empty go with them, even when the user
		// had written them empty.
		{name: "empty hooks", doc: "{\n  \"model\": \"opus\",\n  \"hooks\": {}\n}\n", unit: "  ", back: "{\n  \"model\": \"opus\"\n}\n"},
		{name: "empty event list", doc: "{\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n", unit: "  ", back: "{}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := []byte(tt.doc)
			out, changes, err := Register(doc, bin, "settings.json")
			require.NoError(t, err)
			require.True(t, json.Valid(out), "invalid JSON:\n%s", out)

			assert.Equal(t, wantOurs(bin), ours(t, out))
			assert.Len(t, changes, len(Hooks))
			for _, c := range changes {
				assert.Equal(t, Add, c.Op)
			}
			for _, h := range Hooks {
				assert.Equal(t, h.Timeout, int(hookValue(t, out, h, "timeout").Int()), h.Event)
				assert.Equal(t, "command", hookValue(t, out, h, "type").String(), h.Event)
			}

			// The user's settings are all still there, and their hooks too.
			if len(bytes.TrimSpace(doc)) > 0 {
				var before, after map[string]any
				require.NoError(t, json.Unmarshal(doc, &before))
				require.NoError(t, json.Unmarshal(out, &after))
				for k, v := range before {
					if k != "hooks" {
						assert.Equal(t, v, after[k], "key %s", k)
					}
				}
				assert.Equal(t, userCommands(doc), userCommands(out))
			}
			if tt.unit != "" {
				assert.Equal(t, string(indented(t, out, tt.unit)), string(out), "layout not kept")
			}

			// Registering again changes nothing, byte for byte.
			again, changes, err := Register(out, bin, "settings.json")
			require.NoError(t, err)
			assert.Empty(t, changes)
			assert.Equal(t, string(out), string(again))

			// Unregistering gives back the original bytes.
			back, removed, err := Unregister(out, "settings.json")
			require.NoError(t, err)
			assert.Len(t, removed, len(Hooks))
			switch {
			case tt.back != "":
				assert.Equal(t, tt.back, string(back))
			case len(bytes.TrimSpace(doc)) > 0:
				assert.Equal(t, tt.doc, string(back))
			default:
				assert.JSONEq(t, "{}", string(back))
			}
		})
	}
}

// hookValue returns field of our entry for h in doc.
func hookValue(t *testing.T, doc []byte, h Hook, field string) gjson.Result {
	t.Helper()
	found, err := Parse(doc, "settings.json")
	require.NoError(t, err)
	for _, e := range found {
		if e.Program == h.Program {
			return gjson.GetBytes(doc, e.path()+"."+field)
		}
	}
	t.Fatalf("%s not registered", h.Program)
	return gjson.Result{}
}

func TestRegisterNewFileLayout(t *testing.T) {
	out, _, err := Register(nil, "/opt/harness/bin", "settings.json")
	require.NoError(t, err)
	want := `{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup|resume|clear|compact|fork",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/harness/bin/harness-session-start",
            "args": [],
            "timeout": 120
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/harness/bin/harness-pre-tool-use",
            "args": [],
            "timeout": 30
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/harness/bin/harness-stop",
            "args": [],
            "timeout": 300
          }
        ]
      }
    ],
    "SubagentStop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/harness/bin/harness-subagent-stop",
            "args": [],
            "timeout": 60
          }
        ]
      }
    ],
    "TeammateIdle": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/harness/bin/harness-teammate-idle",
            "args": [],
            "timeout": 60
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/harness/bin/harness-session-end",
            "args": [],
            "timeout": 5
          }
        ]
      }
    ],
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/harness/bin/harness-user-prompt-submit",
            "args": [],
            "timeout": 10
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/harness/bin/harness-post-tool-use",
            "args": [],
            "timeout": 30
          }
        ]
      }
    ],
    "PostToolUseFailure": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/harness/bin/harness-post-tool-use-failure",
            "args": [],
            "timeout": 30
          }
        ]
      }
    ],
    "PreCompact": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/harness/bin/harness-pre-compact",
            "args": [],
            "timeout": 30
          }
        ]
      }
    ],
    "StopFailure": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/harness/bin/harness-stop-failure",
            "args": [],
            "timeout": 30
          }
        ]
      }
    ],
    "ConfigChange": [
      {
        "matcher": "user_settings|project_settings|local_settings",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/harness/bin/harness-config-change",
            "args": [],
            "timeout": 10
          }
        ]
      }
    ]
  }
}
`
	assert.Equal(t, want, string(out))
}

// A moved bin directory updates our entries in place: the result is the
// same as a fresh registration at the new place, with no second set.
func TestRegisterMovedBinDir(t *testing.T) {
	for _, name := range []string{"full.json", "stale.json"} {
		t.Run(name, func(t *testing.T) {
			doc := fixture(t, name)
			atOld, _, err := Register(doc, "/old/place", "settings.json")
			require.NoError(t, err)
			moved, changes, err := Register(atOld, "/new place/bin", "settings.json")
			require.NoError(t, err)

			assert.Equal(t, wantOurs("/new place/bin"), ours(t, moved))
			require.Len(t, changes, len(Hooks))
			for _, c := range changes {
				assert.Equal(t, Update, c.Op, c)
				assert.Contains(t, c.Detail, "was /old/place/")
			}
			fresh, _, err := Register(doc, "/new place/bin", "settings.json")
			require.NoError(t, err)
			assert.Equal(t, string(fresh), string(moved))
		})
	}
}

// Stale registrations from older installs or hand edits are repaired:
// duplicates and entries under the wrong event go, a shared matcher group
// keeps the user's hook and matcher, wrong timeouts are reset.
func TestRegisterRepairs(t *testing.T) {
	doc := fixture(t, "stale.json")
	out, changes, err := Register(doc, bin, "settings.json")
	require.NoError(t, err)
	assert.Equal(t, wantOurs(bin), ours(t, out))
	assert.Equal(t, map[string][]string{"PreToolUse": {"Bash → /usr/local/bin/audit-bash"}}, userCommands(out))

	var log []string
	for _, c := range changes {
		log = append(log, c.String())
	}
	text := strings.Join(log, "\n")
	assert.Contains(t, text, "- Stop               /older/bin/harness-stop (duplicate)")
	assert.Contains(t, text, "- Stop               /old/bin/harness-session-end (a SessionEnd hook, not Stop)")
	assert.Contains(t, text, `~ SessionStart       `+bin+`/harness-session-start (matcher "startup" → "startup|resume|clear|compact|fork")`)
	assert.Contains(t, text, "~ SessionStart       "+bin+"/harness-session-start (timeout 10s → 120s)")
	assert.Contains(t, text, "+ PreToolUse         "+bin+"/harness-pre-tool-use")
	assert.Contains(t, text, "+ SessionEnd         "+bin+"/harness-session-end")
	assert.NotContains(t, text, "audit-bash")

	again, changes, err := Register(out, bin, "settings.json")
	require.NoError(t, err)
	assert.Empty(t, changes)
	assert.Equal(t, string(out), string(again))
}

func TestRegisterRefuses(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"syntax error", "{\n  \"model\": \"opus\",\n}\n", "is not valid JSON: invalid character '}' looking for beginning of object key string (line 3, column 1)"},
		{"truncated", `{"hooks": {`, "is not valid JSON"},
		{"trailing garbage", `{} {}`, "is not valid JSON"},
		{"comments", "{\n  // mine\n  \"a\": 1\n}", "is not valid JSON"},
		{"nested too deep", `{"a": ` + strings.Repeat("[", 2_000_000) + strings.Repeat("]", 2_000_000) + `}`, "is not valid JSON: it nests deeper than 1000 levels"},
		{"an array", `[]`, "is not a JSON object"},
		{"a string", `"x"`, "is not a JSON object"},
		{"hooks not an object", `{"hooks": []}`, "hooks must be an object"},
		{"our event not a list", `{"hooks": {"Stop": {"command": "x"}}}`, "hooks.Stop must be a list"},
		// JSON.parse keeps the last of two keys, gjson finds the first: our
		// entries would go where Claude Code does not look.
		{"hooks twice", "{\n  \"hooks\": {},\n  \"model\": \"opus\",\n  \"hooks\": {\"Stop\": []}\n}\n", `"hooks" appears twice at the top level (lines 2 and 4), and Claude Code reads only the last one`},
		{"an event twice", `{"hooks": {"Stop": [], "Stop": []}}`, `"Stop" appears twice in "hooks" (line 1)`},
		{"a matcher twice", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "matcher": "*", "hooks": []}]}}`, `"matcher" appears twice in hooks.PreToolUse[0]`},
		{"a command twice", `{"hooks": {"Notification": [{"hooks": [{"type": "command", "command": "a", "command": "b"}]}]}}`, `"command" appears twice in hooks.Notification[0].hooks[0]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Register([]byte(tt.doc), bin, "/h/settings.json")
			require.Error(t, err)
			assert.True(t, failure.Is(err, failure.Config), "%v", err)
			assert.Contains(t, err.Error(), "ERROR [CONFIG] /h/settings.json")
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.(*failure.Error).Hint, "left as it was")

			_, _, err = Unregister([]byte(tt.doc), "/h/settings.json")
			assert.Error(t, err)
		})
	}
	_, _, err := Register([]byte("{}"), "relative/bin", "s.json")
	assert.Error(t, err)
}

// Keys written twice elsewhere are the user's business.
func TestRegisterAllowsDuplicatesElsewhere(t *testing.T) {
	doc := []byte(`{"env": {"A": "1", "A": "2"}}`)
	_, _, err := Register(doc, bin, "s.json")
	assert.NoError(t, err)
}

// A file written with CRLF line endings gets CRLF in what we add, and gives
// back its own bytes when we remove it.
func TestRegisterKeepsCRLF(t *testing.T) {
	for _, doc := range []string{
		"{\r\n  \"model\": \"opus\"\r\n}\r\n",
		"{\r\n  \"hooks\": {\r\n    \"Stop\": [\r\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"/x\"}]}\r\n    ]\r\n  }\r\n}\r\n",
		"{}\r\n",
	} {
		out, _, err := Register([]byte(doc), bin, "s.json")
		require.NoError(t, err)
		assert.Equal(t, wantOurs(bin), ours(t, out))
		assert.Equal(t, strings.Count(string(out), "\n"), strings.Count(string(out), "\r\n"), "a bare \\n in:\n%q", out)
		back, _, err := Unregister(out, "s.json")
		require.NoError(t, err)
		assert.Equal(t, doc, string(back))
	}
}

// Another event's odd shape is the user's business, not a reason to refuse.
func TestRegisterIgnoresOtherEventsShape(t *testing.T) {
	doc := []byte(`{"hooks": {"Notification": "say done"}}`)
	out, _, err := Register(doc, bin, "s.json")
	require.NoError(t, err)
	assert.Equal(t, "say done", gjson.GetBytes(out, "hooks.Notification").String())
}

func TestUnregisterOnlyOurs(t *testing.T) {
	full := fixture(t, "full.json")
	withOurs, _, err := Register(full, bin, "s.json")
	require.NoError(t, err)
	// A user hook in the same group as one of ours stays; the group stays.
	shared := bytes.Replace(withOurs, []byte(`"command": "/usr/local/bin/audit-bash --strict", "timeout": 10}`),
		[]byte(`"command": "/usr/local/bin/audit-bash --strict", "timeout": 10}, {"type": "command", "command": "/x/harness-pre-tool-use"}`), 1)
	require.NotEqual(t, string(withOurs), string(shared))

	tests := []struct {
		name    string
		doc     []byte
		removed int
		want    []byte // nil: compare user commands only
	}{
		{"registered", withOurs, len(Hooks), full},
		{"nothing of ours", full, 0, full},
		{"shared group", shared, len(Hooks) + 1, nil},
		{"empty file", []byte(""), 0, []byte("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changes, err := Unregister(tt.doc, "s.json")
			require.NoError(t, err)
			assert.Len(t, changes, tt.removed)
			assert.Empty(t, ours(t, out))
			if tt.want != nil {
				assert.Equal(t, string(tt.want), string(out))
			} else {
				assert.Equal(t, userCommands(full), userCommands(out))
			}
		})
	}
}

func TestProgram(t *testing.T) {
	tests := []struct{ command, program string }{
		{"/a/b/harness-stop", "harness-stop"},
		{"'/a b/harness-stop'", "harness-stop"},
		{`"/a b/harness-stop" --verbose`, "harness-stop"},
		{`/a\ b/harness-stop`, "harness-stop"},
		{"harness-stop", "harness-stop"},
		{"  /x/harness-session-start; echo", "harness-session-start"},
		{"${CLAUDE_PLUGIN_ROOT}/bin/harness-pre-tool-use", "harness-pre-tool-use"},
		{"/opt/tools/harness-stopper", "harness-stopper"},
		{"bash -c '/x/harness-stop'", "bash"},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.program, Program(tt.command), tt.command)
	}
	for _, dir := range []string{"/plain/dir", "/with space/bin", "/it's/bin", `/dollar$HOME/bin`} {
		cmd := Command(dir, "harness-stop")
		assert.Equal(t, filepath.Join(dir, "harness-stop"), firstWord(cmd), cmd)
		assert.True(t, IsOurs(cmd))
	}
	assert.Equal(t, "/plain/dir/harness-stop", Command("/plain/dir", "harness-stop"))
	assert.Equal(t, `'/it'\''s/bin/harness-stop'`, Command("/it's/bin", "harness-stop"))
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	for _, h := range Hooks {
		require.NoError(t, os.WriteFile(filepath.Join(dir, h.Program), []byte("#!/bin/sh\n"), 0o755))
	}
	doc, _, err := Register(nil, dir, "s.json")
	require.NoError(t, err)

	problems := func(doc []byte, binDir string) map[string]string {
		findings, err := Check(doc, binDir, "s.json")
		require.NoError(t, err)
		out := map[string]string{}
		for _, f := range findings {
			if len(f.Problems) > 0 {
				out[f.Hook.Event] = strings.Join(f.Problems, "; ")
			}
		}
		return out
	}
	assert.Empty(t, problems(doc, ""))
	assert.Empty(t, problems(doc, dir))
	assert.Equal(t, "want /else/harness-stop", problems(doc, "/else")["Stop"])

	require.NoError(t, os.Remove(filepath.Join(dir, "harness-stop")))
	assert.Equal(t, map[string]string{"Stop": dir + "/harness-stop is missing or not executable"}, problems(doc, ""))

	assert.Len(t, problems(nil, ""), len(Hooks))
	assert.Equal(t, "not registered", problems([]byte("{}"), "")["SessionEnd"])

	stale := problems(fixture(t, "stale.json"), "")
	assert.Contains(t, stale["Stop"], "registered 2 times")
	assert.Contains(t, stale["SessionEnd"], "registered under Stop")
	assert.Contains(t, stale["SessionStart"], `matcher "startup", want "startup|resume|clear|compact|fork"`)
	assert.Contains(t, stale["SessionStart"], "timeout 10s, want 120s")
}

func TestInstallFile(t *testing.T) {
	full := fixture(t, "full.json")
	tests := []struct {
		name    string
		setup   func(t *testing.T, path string) // prepares the file at path
		created bool
	}{
		{"missing file and directory", func(*testing.T, string) {}, true},
		{"empty file", func(t *testing.T, p string) { write(t, p, "", 0o644) }, false},
		{"user's settings", func(t *testing.T, p string) { write(t, p, string(full), 0o600) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "home", ".claude", "settings.json")
			tt.setup(t, path)
			before, _ := os.ReadFile(path)
			modeBefore := fileMode(path)

			r, err := Install(path, bin, false)
			require.NoError(t, err)
			assert.Equal(t, tt.created, r.Created)
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(r.After), string(after))
			assert.Equal(t, wantOurs(bin), ours(t, after))
			if tt.created {
				assert.Empty(t, r.Backup)
				assert.NoFileExists(t, path+BackupSuffix)
				assert.Equal(t, os.FileMode(0o644), fileMode(path))
			} else {
				assert.Equal(t, path+BackupSuffix, r.Backup)
				assert.Equal(t, string(before), read(t, r.Backup), "backup holds the previous file")
				assert.Equal(t, modeBefore, fileMode(path), "mode kept")
			}

			// A second install changes nothing, not even the backup.
			backupBefore, _ := os.ReadFile(path + BackupSuffix)
			r, err = Install(path, bin, false)
			require.NoError(t, err)
			assert.False(t, r.Changed())
			assert.Equal(t, string(after), read(t, path))
			backupAfter, _ := os.ReadFile(path + BackupSuffix)
			assert.Equal(t, string(backupBefore), string(backupAfter))

			// Uninstall removes what we added and nothing else: a file we
			// created goes (with the directory we created for it), the
			// user's file comes back as it was; an empty one as {}.
			r, err = Uninstall(path, false)
			require.NoError(t, err)
			assert.Len(t, r.Changes, len(Hooks))
			assert.Equal(t, tt.created, r.Removed)
			switch {
			case tt.created:
				assert.NoFileExists(t, path)
				assert.NoFileExists(t, path+BackupSuffix)
				assert.NoDirExists(t, filepath.Dir(path))
				return
			case len(bytes.TrimSpace(before)) > 0:
				assert.Equal(t, string(before), read(t, path))
			default:
				assert.Equal(t, "{}\n", read(t, path))
			}
			assert.Equal(t, string(after), read(t, path+BackupSuffix))
		})
	}
}

// A settings file the harness created holds nothing of the user's: a later
// change (a moved bin directory) writes no backup, and the uninstall deletes
// the file instead of leaving {} and a backup behind. A {} file of the
// user's, with the very same bytes, is kept.
func TestUninstallRemovesFileWeCreated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	write(t, filepath.Join(dir, "settings.local.json"), "{}\n", 0o644)
	_, err := Install(path, bin, false)
	require.NoError(t, err)
	r, err := Install(path, "/moved/bin", false)
	require.NoError(t, err)
	assert.True(t, r.Changed())
	assert.Empty(t, r.Backup)
	assert.NoFileExists(t, path+BackupSuffix)

	r, err = Uninstall(path, true)
	require.NoError(t, err)
	assert.True(t, r.Removed)
	assert.FileExists(t, path, "a dry run deletes nothing")

	r, err = Uninstall(path, false)
	require.NoError(t, err)
	assert.True(t, r.Removed)
	assert.Empty(t, r.Backup)
	assert.NoFileExists(t, path)
	assert.FileExists(t, filepath.Join(dir, "settings.local.json"), "a directory that is not empty stays")

	// The user's own {}: backed up on install, kept on uninstall.
	write(t, path, "{}\n", 0o644)
	_, err = Install(path, bin, false)
	require.NoError(t, err)
	r, err = Uninstall(path, false)
	require.NoError(t, err)
	assert.False(t, r.Removed)
	assert.Equal(t, "{}\n", read(t, path))
	assert.FileExists(t, path+BackupSuffix)

	// So is a file with more than our entries in it.
	require.NoError(t, os.Remove(path+BackupSuffix))
	require.NoError(t, os.Remove(path))
	_, err = Install(path, bin, false)
	require.NoError(t, err)
	doc, err := jsonedit.Append([]byte(read(t, path)), "", "model", "opus")
	require.NoError(t, err)
	write(t, path, string(doc), 0o644)
	r, err = Uninstall(path, false)
	require.NoError(t, err)
	assert.False(t, r.Removed)
	assert.JSONEq(t, `{"model": "opus"}`, read(t, path))
}

func TestInstallRefusesInvalidFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	bad := "{\n  \"model\": \"opus\",,\n}\n"
	write(t, path, bad, 0o600)
	for _, dryRun := range []bool{false, true} {
		_, err := Install(path, bin, dryRun)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "line 2, column 19")
		_, err = Uninstall(path, dryRun)
		require.Error(t, err)
	}
	assert.Equal(t, bad, read(t, path), "left as it was")
	assert.Equal(t, os.FileMode(0o600), fileMode(path))
	assert.NoFileExists(t, path+BackupSuffix)
	entries, _ := os.ReadDir(filepath.Dir(path))
	assert.Len(t, entries, 1, "no temporary files left behind")
}

// A settings file of MaxFile bytes is read and edited; one byte more and
// it is refused, left as it was (a hook reading it counts it as no file).
func TestInstallAtTheSizeBound(t *testing.T) {
	dir := t.TempDir()
	body := func(size int) string {
		head := "{\"model\": \"opus\"}"
		return head + strings.Repeat(" ", size-len(head)-1) + "\n"
	}
	at, past := filepath.Join(dir, "at.json"), filepath.Join(dir, "past.json")
	write(t, at, body(MaxFile), 0o644)
	write(t, past, body(MaxFile+1), 0o644)

	r, err := Install(at, bin, false)
	require.NoError(t, err)
	assert.True(t, r.Changed())
	assert.Contains(t, read(t, at), "harness-stop")

	_, err = Install(past, bin, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot read "+past)
	assert.ErrorIs(t, err, safefile.ErrTooLarge)
	assert.Equal(t, body(MaxFile+1), read(t, past), "left as it was")
	assert.Nil(t, readQuiet(past))
}

func TestInstallDryRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")
	r, err := Install(path, bin, true)
	require.NoError(t, err)
	assert.True(t, r.Created)
	assert.Len(t, r.Changes, len(Hooks))
	assert.NoDirExists(t, filepath.Join(dir, ".claude"))

	write(t, path, "{}\n", 0o644)
	r, err = Install(path, bin, true)
	require.NoError(t, err)
	assert.Len(t, r.Changes, len(Hooks))
	assert.Empty(t, r.Backup)
	assert.Equal(t, "{}\n", read(t, path))
	assert.NoFileExists(t, path+BackupSuffix)
}

// A settings file that is a symlink (dotfile managers) is edited where it
// points, and stays a symlink.
func TestInstallThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "claude-settings.json")
	write(t, target, `{"model": "opus"}`, 0o644)
	link := filepath.Join(dir, ".claude", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
	require.NoError(t, os.Symlink(target, link))

	r, err := Install(link, bin, false)
	require.NoError(t, err)
	assert.Equal(t, target, r.Path)
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.True(t, fi.Mode()&os.ModeSymlink != 0, "still a symlink")
	assert.Equal(t, wantOurs(bin), ours(t, []byte(read(t, link))))
	assert.Equal(t, `{"model": "opus"}`, read(t, target+BackupSuffix))
}

func TestUninstallMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	r, err := Uninstall(path, false)
	require.NoError(t, err)
	assert.False(t, r.Changed())
	assert.NoFileExists(t, path)
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), mode))
	require.NoError(t, os.Chmod(path, mode))
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

func fileMode(path string) os.FileMode {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Mode().Perm()
}

// Our entries run without a shell (Claude Code's exec form: an empty
// "args" beside the command), whose start cost every hook call about a
// millisecond; a command that needs the shell's quotes keeps the shell.
// Entries an older install wrote are moved to the form they want.
func TestRegisterExecForm(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows keeps the shell form (Git Bash)")
	}
	argsOf := func(t *testing.T, doc []byte, event string) gjson.Result {
		t.Helper()
		entries := gjson.GetBytes(doc, "hooks."+event+".0.hooks")
		require.Len(t, entries.Array(), 1, "%s", doc)
		return entries.Array()[0].Get("args")
	}
	plainShell := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/opt/bin/harness-stop","timeout":300}]}]}}`
	quotedExec := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"'/my bin/harness-stop'","args":[],"timeout":300}]}]}}`
	withArgs := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/opt/bin/harness-stop","args":["-x"],"timeout":300}]}]}}`
	tests := []struct {
		name, doc, binDir string
		wantArgs          bool   // an empty args list after the install
		change            string // the Stop entry's change, "" for none
	}{
		{"a new entry, plain path", `{}`, "/opt/bin", true, "+ Stop"},
		{"a new entry, a path with a space", `{}`, "/my bin", false, "+ Stop"},
		{"an older install's entry", plainShell, "/opt/bin", true, "(run without a shell)"},
		{"exec form with a quoted command", quotedExec, "/my bin", false, "(run through the shell (its path needs quoting))"},
		{"arguments given", withArgs, "/opt/bin", true, "(run without a shell)"},
		{"moved to a path that needs quotes", plainShell, "/my bin", false, "(was /opt/bin/harness-stop)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changes, err := Register([]byte(tt.doc), tt.binDir, "settings.json")
			require.NoError(t, err)
			args := argsOf(t, out, "Stop")
			if tt.wantArgs {
				assert.True(t, args.IsArray() && len(args.Array()) == 0, "args: %s", args.Raw)
			} else {
				assert.False(t, args.Exists(), "args: %s", args.Raw)
			}
			var stop []string
			for _, c := range changes {
				if c.Event == "Stop" {
					stop = append(stop, c.String())
				}
			}
			require.Len(t, stop, 1, "%v", stop)
			assert.Contains(t, stop[0], tt.change)
			again, changes, err := Register(out, tt.binDir, "settings.json")
			require.NoError(t, err)
			assert.Empty(t, changes, "a second install changes nothing")
			assert.Equal(t, string(out), string(again))
		})
	}

	findings, err := Check([]byte(quotedExec), "", "settings.json")
	require.NoError(t, err)
	for _, f := range findings {
		if f.Hook.Event == "Stop" {
			assert.Contains(t, strings.Join(f.Problems, "; "), `"args" has Claude Code run it without the shell its command needs`)
		}
	}
}
