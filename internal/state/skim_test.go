package state

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skimSeeds are tasks files that exercise what Skim decodes in place and
// what it hands to the parser: escapes in keys and values, null and empty
// lists, numbers written otherwise, a user's own members with brackets in
// their strings, CRLF and compact layouts.
var skimSeeds = []string{
	`{"version": 2, "tasks": [], "session_count": 0, "last_session": null}`,
	"{\n  \"version\": 2,\n  \"session_config\": {\"concurrency_mode\": \"concurrent\", \"max_sessions\": 3, \"allowed_commands\": [\"go test\"]},\n  \"tasks\": [\n    {\"id\": \"task-001\", \"title\": \"A\", \"status\": \"pending\", \"depends_on\": [], \"attempts\": 0,\n     \"validation\": {\"command\": \"go test ./...\", \"timeout_seconds\": 60}, \"error_log\": [], \"checkpoints\": []}\n  ],\n  \"session_count\": 1,\n  \"last_session\": null\n}\n",
	`{"tasks": [{"id": "a", "status": "in_progress", "checkpoints": [{"step": 1, "total": 2, "description": "x ] } [ {", "timestamp": "t"}], "mine": [1, {"k": null, "s": "\"]}"}]}], "session_count": 0, "last_session": "x"}`,
	`{"tasks": [{"id": "a", "status": "failed", "attempts": 3, "max_attempts": 3, "error_log": ["[DEPENDENCY] x", "with \"quotes\" and \\ and \u00e9"], "lease_expires_at": "2001-01-01T00:00:00Z", "allowed_paths": null}], "session_count": 1, "last_session": null}`,
	`{"tasks": [{"id": "a\u002d1", "st\u0061tus": "pending", "attempts": 2.0, "max_attempts": 1e1, "depends_on": ["b\"c"], "allowed_paths": [], "claimed_by": null}, {"id": "b", "status": "completed", "checkpoints": null, "priority": "P0"}]}`,
	"{\r\n\t\"tasks\" : [ {\r\n\t\t\"id\" : \"x\" , \"status\" : \"pending\" , \"worktree\" : \"/tmp/w\" } ] ,\r\n\t\"session_count\" : 12\r\n}\r\n",
	`{"tasks":[{"id":"x","status":"pending","depends_on":["a","b"],"checkpoints":[{},{},{}],"error_log":[]}],"session_count":3,"created":"2025-01-01T00:00:00Z"}`,
	`{"tasks": [{"id": "a", "status": "pending", "title": ""}], "session_config": null}`,
	`{"tasks": [{"id": "a"}, {"id": "a", "status": "pending"}]}`,
	`{"tasks": [{"id": "a", "status": "pending", "attempts": -1}]}`,
	`[]`, `null`, `{`, ``, "\xff\xfe", `{"tasks": "x"}`, `{"tasks": [1]}`, `{"tasks": [{"id": "a", "status": "pending",]}`,
}

// FuzzSkim holds Skim to Parse: on any text Parse accepts, Skim reads the
// same session fields and config, and of each task every member it reads
// (the checkpoints by their number), and Whole gives Parse's task whole.
// On any text at all it never panics (the record's word for a file could
// be wrong). `go test -fuzz=FuzzSkim ./internal/state` explores.
func FuzzSkim(f *testing.F) {
	for _, seed := range skimSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		skimmed, serr := Skim(append([]byte(nil), raw...))
		parsed, err := Parse(raw, FileName)
		if err != nil {
			return
		}
		if serr != nil {
			t.Fatalf("Skim refused what Parse reads: %v\n%q", serr, raw)
		}
		if msg := skimDiffers(parsed, skimmed); msg != "" {
			t.Fatalf("%s\n%q", msg, raw)
		}
	})
}

// skimDiffers says how skimmed, a skim of the text parsed was read from,
// differs from what Skim promises ("" when it does not).
func skimDiffers(parsed, skimmed *State) string {
	if parsed.Version != skimmed.Version || parsed.Created != skimmed.Created ||
		parsed.SessionCount != skimmed.SessionCount || parsed.LastSession != skimmed.LastSession {
		return fmt.Sprintf("session fields: %+v vs %+v", skimmed, parsed)
	}
	if fmt.Sprintf("%#v", parsed.Config) != fmt.Sprintf("%#v", skimmed.Config) {
		return fmt.Sprintf("config: %#v vs %#v", skimmed.Config, parsed.Config)
	}
	if len(parsed.Tasks) != len(skimmed.Tasks) {
		return fmt.Sprintf("%d tasks, Parse read %d", len(skimmed.Tasks), len(parsed.Tasks))
	}
	for i := range parsed.Tasks {
		want := parsed.Tasks[i]
		whole, err := skimmed.Whole(i)
		if err != nil || fmt.Sprintf("%#v", whole) != fmt.Sprintf("%#v", want) {
			return fmt.Sprintf("Whole(%d): %#v (%v), Parse read %#v", i, whole, err, want)
		}
		want.Command, want.TimeoutSeconds, want.Cleanup = "", 0, ""
		if n := len(want.Checkpoints); n > 0 {
			want.Checkpoints = make([]Checkpoint, n)
		}
		if got := skimmed.Tasks[i]; fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
			return fmt.Sprintf("task %d: skimmed %#v, Parse read %#v", i, got, want)
		}
	}
	return ""
}

// TestSkimAtScale: on a generated 2,000-task state Skim reads what Parse
// reads, and sizes its list from the first tasks (the list is not grown
// task by task).
func TestSkimAtScale(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\n  \"version\": 2,\n  \"tasks\": [\n")
	statuses := []string{Completed, Completed, Pending, Failed, InProgress}
	for i := 0; i < 2000; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `    {"id": "task-%04d", "title": "Part %d", "status": %q, "priority": "P%d", "depends_on": [%s], "attempts": %d, "max_attempts": 3,`+
			` "validation": {"command": "go test ./p%d", "timeout_seconds": 60}, "error_log": [%s], "checkpoints": [%s], "claimed_by": %s}`,
			i, i, statuses[i%len(statuses)], i%3, deps(i), i%4, i, errs(i), steps(i), claim(i))
	}
	b.WriteString("\n  ],\n  \"session_count\": 41,\n  \"last_session\": \"2026-01-01T00:00:00Z\"\n}\n")
	raw := []byte(b.String())
	parsed, err := Parse(raw, FileName)
	require.NoError(t, err)
	skimmed, err := Skim(raw)
	require.NoError(t, err)
	assert.Empty(t, skimDiffers(parsed, skimmed))
	assert.Less(t, cap(skimmed.Tasks), 2*len(skimmed.Tasks), "the list was sized, not doubled past need")
	_, err = skimmed.Whole(1999)
	assert.NoError(t, err)
}

func deps(i int) string {
	if i == 0 {
		return ""
	}
	return fmt.Sprintf(`"task-%04d"`, i-1)
}

func errs(i int) string {
	if i%5 != 3 {
		return ""
	}
	return `"[TEST_FAIL] exit 1", "[DEPENDENCY] blocked by \"x\""`
}

func steps(i int) string {
	return strings.TrimSuffix(strings.Repeat(`{"step": 1, "total": 2, "description": "did {it} [well]", "timestamp": "2026-01-01T00:00:00Z"},`, i%3), ",")
}

func claim(i int) string {
	if i%5 != 4 {
		return "null"
	}
	return `"session:abc"`
}

// TestSkimRefusesWhatIsNotATasksFile: text that is not an object with a
// task list is refused, never half read.
func TestSkimRefusesWhatIsNotATasksFile(t *testing.T) {
	for _, doc := range []string{``, `[]`, `null`, `{`, `{"tasks": "x"}`, `{"tasks": [1]}`, `{"tasks": [{"id": "a"`, `{"version": 2}`} {
		_, err := Skim([]byte(doc))
		assert.Error(t, err, "%q", doc)
	}
}
