package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/tidwall/gjson"
)

// This file edits JSON text in place, keeping the layout of the file: a
// replaced value stays where it was; a new member or element goes at the end
// of its container, on its own line and indented like its siblings when the
// file is indented, with the file's own line ending (a file written on Windows
// keeps its CRLF); a removed one takes its separator with it. So inserting a
// value and removing it again restores the original bytes.

var errLayout = errors.New("cannot locate the value in the settings text")

// locate returns the value at path with its position checked against doc.
func locate(doc []byte, path string) (gjson.Result, error) {
	r := gjson.GetBytes(doc, path)
	if path == "" { // the document itself, without the space around it
		r = gjson.ParseBytes(doc)
		r.Raw = string(bytes.TrimSpace(doc))
		r.Index = bytes.Index(doc, []byte(r.Raw))
	}
	if !r.Exists() || r.Index < 0 || r.Index+len(r.Raw) > len(doc) || string(doc[r.Index:r.Index+len(r.Raw)]) != r.Raw {
		return r, errLayout
	}
	return r, nil
}

// replace sets the existing value at path to v.
func replace(doc []byte, path string, v any) ([]byte, error) {
	r, err := locate(doc, path)
	if err != nil {
		return nil, err
	}
	val, err := render(v, lineIndent(doc, r.Index), indentUnit(doc), compact(doc))
	if err != nil {
		return nil, err
	}
	return splice(doc, r.Index, r.Index+len(r.Raw), lineEndings(doc, val)), nil
}

// appendTo adds v at the end of the container at path: as member key of an
// object, or as a new element of an array when key is "".
func appendTo(doc []byte, path, key string, v any) ([]byte, error) {
	c, err := locate(doc, path)
	if err != nil {
		return nil, err
	}
	start, end := c.Index, c.Index+len(c.Raw)
	unit, flat := indentUnit(doc), compact(doc)
	inner := doc[start+1 : end-1]
	var memberIndent, closeIndent string
	var at int // where the new text goes
	var sep string
	if len(bytes.TrimSpace(inner)) == 0 {
		at = start + 1
		if !flat {
			closeIndent = lineIndent(doc, start)
			memberIndent = closeIndent + unit
		}
	} else {
		at = end - 1
		for at > start+1 && isSpace(doc[at-1]) {
			at--
		}
		sep = ","
		first := start + 1
		for first < end && isSpace(doc[first]) {
			first++
		}
		if bytes.IndexByte(doc[start:first], '\n') >= 0 {
			memberIndent = lineIndent(doc, first)
		} else {
			flat = true // members share the bracket's line: stay on it
		}
	}
	val, err := render(v, memberIndent, unit, flat)
	if err != nil {
		return nil, err
	}
	if key != "" {
		k, _ := json.Marshal(key)
		colon := ": "
		if flat {
			colon = ":"
		}
		val = string(k) + colon + val
	}
	var text string
	switch {
	case flat:
		text = sep + val
	case sep == "":
		// An empty container opens up: `{}` becomes `{\n  "k": v\n}`.
		text = "\n" + memberIndent + val + "\n" + closeIndent
		return splice(doc, at, end-1, lineEndings(doc, text)), nil
	default:
		text = sep + "\n" + memberIndent + val
	}
	return splice(doc, at, at, lineEndings(doc, text)), nil
}

// remove deletes the member or element at path together with one separator,
// so that remove(appendTo(doc)) == doc.
func remove(doc []byte, path string) ([]byte, error) {
	r, err := locate(doc, path)
	if err != nil {
		return nil, err
	}
	start, end := r.Index, r.Index+len(r.Raw)
	p := start - 1
	for p >= 0 && isSpace(doc[p]) {
		p--
	}
	if p >= 0 && doc[p] == ':' { // an object member: start at its key
		for p--; p >= 0 && isSpace(doc[p]); p-- {
		}
		if p < 0 || doc[p] != '"' {
			return nil, errLayout
		}
		for p--; p >= 0 && !(doc[p] == '"' && !escaped(doc, p)); p-- {
		}
		if p < 0 {
			return nil, errLayout
		}
		start = p
		for p--; p >= 0 && isSpace(doc[p]); p-- {
		}
	}
	if p < 0 {
		return nil, errLayout
	}
	if doc[p] == ',' { // not the first: take the comma before it
		return splice(doc, p, end, ""), nil
	}
	q := end
	for q < len(doc) && isSpace(doc[q]) {
		q++
	}
	if q < len(doc) && doc[q] == ',' { // the first of several: take the comma after it
		for q++; q < len(doc) && isSpace(doc[q]); q++ {
		}
		return splice(doc, start, q, ""), nil
	}
	return splice(doc, p+1, q, ""), nil // the only one: the container empties
}

// escaped reports whether the byte at i is preceded by an odd number of
// backslashes.
func escaped(doc []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && doc[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func splice(doc []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(doc)-(to-from)+len(text))
	out = append(out, doc[:from]...)
	out = append(out, text...)
	return append(out, doc[to:]...)
}

// render encodes v as JSON indented for a value that starts on a line
// indented by indent, or on one line when flat.
func render(v any, indent, unit string, flat bool) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if !flat {
		enc.SetIndent(indent, unit)
	}
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// lineEndings gives text, written with \n, the line ending of doc: \r\n
// when doc's first line ends so. (JSON strings cannot hold a raw newline, so
// every \n in text is a line break.)
func lineEndings(doc []byte, text string) string {
	if i := bytes.IndexByte(doc, '\n'); i > 0 && doc[i-1] == '\r' {
		return strings.ReplaceAll(text, "\n", "\r\n")
	}
	return text
}

// lineIndent returns the whitespace that starts the line holding pos.
func lineIndent(doc []byte, pos int) string {
	start := bytes.LastIndexByte(doc[:pos], '\n') + 1
	end := start
	for end < len(doc) && (doc[end] == ' ' || doc[end] == '\t') {
		end++
	}
	return string(doc[start:end])
}

// indentUnit guesses one level of the file's indentation from its first
// indented line; two spaces when the file has none.
func indentUnit(doc []byte) string {
	for _, line := range bytes.Split(doc, []byte("\n"))[1:] {
		trimmed := bytes.TrimLeft(line, " \t")
		if len(trimmed) > 0 && len(trimmed) < len(line) {
			return string(line[:len(line)-len(trimmed)])
		}
	}
	return "  "
}

// compact reports whether the document is written on one line (a non-empty
// value with no newline inside): such a file stays on one line.
func compact(doc []byte) bool {
	trimmed := bytes.TrimSpace(doc)
	return bytes.IndexByte(trimmed, '\n') < 0 && len(bytes.TrimSpace(trimmed[1:len(trimmed)-1])) > 0
}
