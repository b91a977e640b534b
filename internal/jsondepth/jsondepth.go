// Package jsondepth bounds how deeply JSON text nests before anything parses
// it recursively. gjson's validator (and any recursive parser) descends once
// per bracket, so ten million nested brackets exhaust the stack and kill the
// process with a fatal error no recover can catch: a hook must never die
// that way, whatever Claude Code or a hand edit hands it.
package jsondepth

import (
	"bytes"

	"github.com/tidwall/gjson"
)

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
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			end := stringEnd(data, i+1)
			if end < 0 {
				return false // the text ends inside a string
			}
			i = end
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

// stringEnd returns the index of the quote that ends the string whose text
// begins at data[from], -1 when none does: the next quote not escaped, one
// preceded by an even number of backslashes. A payload's strings are long
// (a whole file in a Write), and bytes.IndexByte finds each quote many
// bytes at a time where a loop would look at every byte.
func stringEnd(data []byte, from int) int {
	for i := from; i < len(data); i++ {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		backslashes := 0
		for k := i - 1; k >= from && data[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return i
		}
	}
	return -1
}

// Valid reports whether data is valid JSON nested no deeper than Max: the
// check to run instead of gjson.ValidBytes on text the harness did not
// write.
func Valid(data []byte) bool { return !Exceeds(data, Max) && gjson.ValidBytes(data) }
