package quiet_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/quiet"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/sessionhook"
)

// member finds the payload's cwd where the hook's own reader (gjson) finds
// the same one, and says it is not certain wherever they might differ.
func TestMember(t *testing.T) {
	tests := []struct {
		name, doc, want string
		certain         bool
	}{
		{"the member", `{"session_id":"s","cwd":"/p/q","hook_event_name":"Stop"}`, "/p/q", true},
		{"spaces everywhere", " \n{ \"cwd\" :\t\"/p\" , \"x\" : 1 }\n", "/p", true},
		{"none", `{"session_id":"s"}`, "", true},
		{"empty object", `{}`, "", true},
		{"not a string", `{"cwd":42}`, "", true},
		{"null", `{"cwd":null,"a":true}`, "", true},
		{"nested members are not it", `{"tool_input":{"cwd":"/x","a":[1,{"cwd":"/y"}]},"cwd":"/p"}`, "/p", true},
		{"only nested", `{"tool_input":{"cwd":"/x"}}`, "", true},
		{"quotes and brackets inside strings", `{"a":"}\"{[","b":{"c":"]}\\\""},"cwd":"/p"}`, "/p", true},
		{"after a long nested value", `{"tool_input":{"content":"` + strings.Repeat(`x\n\"{`, 5000) + `"},"cwd":"/p"}`, "/p", true},
		{"an escape in the value", `{"cwd":"\/p"}`, "", false},
		{"an escape in a key", `{"c\u0077d":"/q","cwd":"/p"}`, "", false},
		{"twice", `{"cwd":"/p","cwd":"/q"}`, "", false},
		{"not an object", `["cwd","/p"]`, "", false},
		{"a space Go trims, then an object", "\u00a0{\"cwd\":\"/p\"}", "", false},
		{"cut in a string", `{"cwd":"/p`, "", false},
		{"cut in a nested value", `{"a":{"b":[1,2`, "", false},
		{"cut after a member", `{"cwd":"/p",`, "", false},
		{"nothing", ``, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, certain := quiet.Member([]byte(tt.doc), "cwd")
			assert.Equal(t, tt.certain, certain)
			assert.Equal(t, tt.want, got)
			if certain {
				// Where it is certain, the hook reads the same.
				assert.Equal(t, hook.Parse([]byte(tt.doc)).Str("cwd"), got)
			}
		})
	}
}

// The probes look for the files by the names the hooks give them.
func TestNames(t *testing.T) {
	t.Setenv("HARNESS_RECORD_DIR", t.TempDir())
	rec := record.Of("/p")
	assert.Equal(t, [...]string{root.TasksFile, root.ActiveMarker, root.RuntimeDir, record.Judged, record.LogStampName, root.ProgressFile,
		filepath.Base(rec.SessionsDir()), strings.TrimSuffix(filepath.Base(sessionhook.RuntimePath(rec, "s")), "s.json")}, quiet.Names)
}

// Wherever member is certain and the hook reads the payload at all, the
// two read the same cwd.
func FuzzMember(f *testing.F) {
	for _, seed := range []string{
		`{"session_id":"s","cwd":"/p/q"}`, `{"tool_input":{"cwd":"/x"},"cwd":"/p"}`, `{"cwd":42}`,
		`{"a":"}\"{[","cwd":"/p"}`, `{"cwd":"/p","cwd":"/q"}`, ` {"a":[1,{"b":null}],"cwd":"/é"} `,
		`{"a":1 "cwd":"/p"}`, `{,"cwd":"/p"}`, `{"cwd":"/p"}}`, `{"c":tru,"cwd":"/p"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, certain := quiet.Member(doc, "cwd")
		if p := hook.Parse(doc); certain && !p.Malformed {
			assert.Equal(t, p.Str("cwd"), got, "payload %q", doc)
		}
	})
}

// A Write of a 200 kB source file: the payload Off reads whole before it
// decides (peekLimit is 256 kB).
func BenchmarkMember(b *testing.B) {
	line := `\tif err := run(\"go\", \"test\", \"./...\"); err != nil {\n\t\treturn fmt.Errorf(\"test: %w\", err) // \\\\ a comment\n\t}\n`
	doc := []byte(`{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Write",` +
		`"tool_input":{"file_path":"/p/main.go","content":"` + strings.Repeat(line, 200<<10/len(line)) + `"}}`)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		quiet.Member(doc, "cwd")
	}
}
