// Package jsondepth bounds how deeply JSON text nests before anything parses
// it recursively. gjson's validator (and any recursive parser) descends once
// per bracket, so ten million nested brackets exhaust the stack and kill the
// process with a fatal error no recover can catch: a hook must never die
// that way, whatever Claude Code or a hand edit hands it.
package jsondepth

import "github.com/tidwall/gjson"

// Max is the deepest nesting the harness reads. Its own files nest five
// levels; Claude Code's payloads a handful more. A thousand leaves room for
// anything a person writes and stays far from any stack limit.
const Max = 1000

// Exceeds reports whether data, read as JSON, nests arrays and objects
// deeper than max. It is one pass over the bytes with no allocation;
// brackets inside strings do not count. It does not validate: text that is
// not JSON at all is left to the parser.
func Exceeds(data []byte, max int) bool {
	depth := 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped character cannot end the string
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

// Valid reports whether data is valid JSON nested no deeper than Max: the
// check to run instead of gjson.ValidBytes on text the harness did not
// write.
func Valid(data []byte) bool { return !Exceeds(data, Max) && gjson.ValidBytes(data) }
