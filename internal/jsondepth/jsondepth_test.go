package jsondepth

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExceeds(t *testing.T) {
	nested := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name string
		doc  string
		max  int
		want bool
	}{
		{"flat", `{"a": 1, "b": [1, 2]}`, 2, false},
		{"at the limit", nested(3), 3, false},
		{"one past", nested(4), 3, true},
		{"objects count", `{"a": {"b": {"c": {}}}}`, 3, true},
		{"brackets in strings do not", `{"a": "[[[[{{{{"}`, 1, false},
		{"escaped quote keeps the string open", `{"a": "\"[[[["}`, 1, false},
		{"escaped backslash ends it", `{"a": "\\", "b": [[[]]]}`, 2, true},
		{"ten million", nested(10_000_000), Max, true},
		{"unclosed", strings.Repeat("{\"a\":", 5), 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Exceeds([]byte(tc.doc), tc.max))
		})
	}
}

// A hook's payload carrying a file (a Write, a Read's response): one long
// string, escapes in it.
func BenchmarkExceedsPayload(b *testing.B) {
	line := `\tif err := run(\"go\", \"test\"); err != nil {\n\t\treturn fmt.Errorf(\"%w\", err) // \\\\ a comment\n\t}\n`
	data := []byte(`{"session_id":"s","cwd":"/p","tool_name":"Write","tool_input":{"file_path":"/p/main.go","content":"` +
		strings.Repeat(line, 1<<20/len(line)) + `"}}`)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Exceeds(data, Max)
	}
}

// A tasks file: many short strings, numbers and brackets.
func BenchmarkExceedsTasks(b *testing.B) {
	task := `{"id": "task-00042", "title": "Implement part 42", "status": "pending", "priority": "P1", "depends_on": ["task-00041"], ` +
		`"attempts": 1, "max_attempts": 3, "validation": {"command": "go test ./...", "timeout_seconds": 300}, "error_log": [], ` +
		`"checkpoints": [{"step": 1, "total": 2, "description": "half", "timestamp": "2025-07-01T10:05:00Z"}]},` + "\n"
	data := []byte(`{"version": 2, "tasks": [` + strings.Repeat(task, 1000) + `{}]}`)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Exceeds(data, Max)
	}
}

// exceedsByByte is Exceeds as it first was, one byte at a time: the oracle
// for FuzzExceeds.
func exceedsByByte(data []byte, max int) bool {
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			if depth++; depth > max {
				return true
			}
		case ']', '}':
			depth--
		}
	}
	return false
}

// Exceeds never panics, whatever the bytes, and answers as the
// byte-by-byte scan does.
func FuzzExceeds(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"]}"}]}`), 2)
	for _, seed := range []string{`{"a":"b\"[[[["}`, `[[["\\"]]]`, `"\\\\\"[[`, `{"a":"\\\\"}[[`, `[[[`, `"unterminated [[[`,
		`{"s":"` + strings.Repeat(`\\`, 50) + `"}[[`, `\"[[`} {
		f.Add([]byte(seed), 2)
	}
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		assert.Equal(t, exceedsByByte(data, max), Exceeds(data, max), "%q, max %d", data, max)
	})
}
