// Package jsonedit edits JSON text in place, keeping the layout a person (or
// the harness) wrote: a replaced value stays where it was; a new member or
// element goes at the end of its container, on its own line and indented like
// its siblings when the file is indented, with the file's own line ending (a
// file written on Windows keeps its CRLF); a removed one takes its separator
// with it, so inserting a value and removing it again restores the original
// bytes. Bytes outside the edited value never change, so members the harness
// does not know survive every edit.
//
// Every edit first reads the value back at the position gjson reports and
// refuses with ErrLayout when the text there is not what was read: an edit is
// never made at a guessed position.
package jsonedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// ErrLayout is returned when the value to edit cannot be located in the text.
var ErrLayout = errors.New("cannot locate the value to edit in the JSON text")

// Layout is how a document is written: the indentation step, whether it is
// on one line, and its line ending. An edit of a piece of a file (one element
// of a long array) is given the whole file's layout, since the piece alone
// says nothing about it.
type Layout struct {
	Unit string // one level of indentation
	Flat bool   // the document is written on one line: it stays on one line
	CRLF bool   // lines end in \r\n
}

// LayoutOf reads doc's layout: the indentation of its first indented line
// (two spaces when it has none), whether it is a non-empty value written on
// one line, and whether its first line ends in \r\n.
func LayoutOf(doc []byte) Layout {
	l := Layout{Unit: "  "}
	// Line by line from the second, stopping at the first indented one:
	// splitting a large document whole would cost more than the edit.
	rest := doc
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[i+1:]
	} else {
		rest = nil
	}
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		trimmed := bytes.TrimLeft(line, " \t")
		if len(trimmed) > 0 && len(trimmed) < len(line) {
			l.Unit = string(line[:len(line)-len(trimmed)])
			break
		}
	}
	trimmed := bytes.TrimSpace(doc)
	l.Flat = len(trimmed) >= 2 && bytes.IndexByte(trimmed, '\n') < 0 && len(bytes.TrimSpace(trimmed[1:len(trimmed)-1])) > 0
	if i := bytes.IndexByte(doc, '\n'); i > 0 && doc[i-1] == '\r' {
		l.CRLF = true
	}
	return l
}

// Get returns the value at path (gjson syntax; "" is the document itself,
// without the space around it) with its position checked against doc.
func Get(doc []byte, path string) (gjson.Result, error) {
	r := gjson.GetBytes(doc, path)
	if path == "" {
		r = gjson.ParseBytes(doc)
		r.Raw = string(bytes.TrimSpace(doc))
		r.Index = bytes.Index(doc, []byte(r.Raw))
	}
	if !r.Exists() || r.Index < 0 || r.Index+len(r.Raw) > len(doc) || string(doc[r.Index:r.Index+len(r.Raw)]) != r.Raw {
		return r, ErrLayout
	}
	return r, nil
}

// Replace sets the existing value at path to v.
func Replace(doc []byte, path string, v any) ([]byte, error) {
	return LayoutOf(doc).Replace(doc, path, v)
}

// Append adds v at the end of the container at path: as member key of an
// object, or as a new element of an array when key is "".
func Append(doc []byte, path, key string, v any) ([]byte, error) {
	return LayoutOf(doc).Append(doc, path, key, v)
}

// Set sets path to v: it replaces an existing value, adds a missing member
// to its object, and creates missing parent objects. A final ".-1" appends v
// to the array at the rest of the path, creating the array when missing.
func Set(doc []byte, path string, v any) ([]byte, error) {
	return LayoutOf(doc).Set(doc, path, v)
}

// Replace is the package's Replace with the layout given.
func (l Layout) Replace(doc []byte, path string, v any) ([]byte, error) {
	r, err := Get(doc, path)
	if err != nil {
		return nil, err
	}
	val, err := render(v, lineIndent(doc, r.Index), l.Unit, l.Flat)
	if err != nil {
		return nil, err
	}
	return splice(doc, r.Index, r.Index+len(r.Raw), l.lineEndings(val)), nil
}

// Append is the package's Append with the layout given.
func (l Layout) Append(doc []byte, path, key string, v any) ([]byte, error) {
	return l.appendAll(doc, path, key, []any{v})
}

// AppendAll adds every value of vs, in order, at the end of the array at
// path, in one edit: appending them one by one would copy the document
// once per value.
func (l Layout) AppendAll(doc []byte, path string, vs []any) ([]byte, error) {
	if len(vs) == 0 {
		return doc, nil
	}
	return l.appendAll(doc, path, "", vs)
}

// appendAll is Append of several values (key names the first, for one).
func (l Layout) appendAll(doc []byte, path, key string, vs []any) ([]byte, error) {
	c, err := Get(doc, path)
	if err != nil {
		return nil, err
	}
	start, end := c.Index, c.Index+len(c.Raw)
	if end-start < 2 {
		return nil, ErrLayout
	}
	flat := l.Flat
	inner := doc[start+1 : end-1]
	var memberIndent, closeIndent string
	var at int // where the new text goes
	var sep string
	if len(bytes.TrimSpace(inner)) == 0 {
		at = start + 1
		if !flat {
			closeIndent = lineIndent(doc, start)
			memberIndent = closeIndent + l.Unit
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
			flat = false
		} else {
			flat = true // members share the bracket's line: stay on it
		}
	}
	var text strings.Builder
	for i, v := range vs {
		val, err := render(v, memberIndent, l.Unit, flat)
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
		if i > 0 {
			sep = ","
		}
		if flat {
			text.WriteString(sep + val)
		} else {
			text.WriteString(sep + "\n" + memberIndent + val)
		}
	}
	switch {
	case flat:
		return splice(doc, at, at, text.String()), nil
	case at == start+1:
		// An empty container opens up: `{}` becomes `{\n  "k": v\n}`.
		return splice(doc, at, end-1, l.lineEndings(text.String()+"\n"+closeIndent)), nil
	default:
		return splice(doc, at, at, l.lineEndings(text.String())), nil
	}
}

// Set is the package's Set with the layout given.
func (l Layout) Set(doc []byte, path string, v any) ([]byte, error) {
	if arrPath, ok := strings.CutSuffix(path, ".-1"); ok {
		arr := gjson.GetBytes(doc, arrPath)
		if !arr.Exists() || !arr.IsArray() {
			return l.Set(doc, arrPath, []any{v})
		}
		return l.Append(doc, arrPath, "", v)
	}
	if r := gjson.GetBytes(doc, path); r.Exists() {
		if _, err := Get(doc, path); err != nil {
			// A value gjson finds but cannot place (a path through
			// escapes): sjson rewrites it without keeping the layout.
			return sjson.SetBytes(doc, path, v)
		}
		return l.Replace(doc, path, v)
	}
	parentPath, key := splitPath(path)
	if key == "" {
		return nil, ErrLayout // no member name to add
	}
	parent, err := Get(doc, parentPath)
	if err == nil && parent.IsObject() {
		return l.Append(doc, parentPath, key, v)
	}
	if parentPath == "" {
		return sjson.SetBytes(doc, path, v)
	}
	return l.Set(doc, parentPath, map[string]any{key: v})
}

// Remove deletes the member or element at path together with one separator,
// so that Remove(Append(doc)) == doc.
func Remove(doc []byte, path string) ([]byte, error) {
	r, err := Get(doc, path)
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
			return nil, ErrLayout
		}
		for p--; p >= 0 && !(doc[p] == '"' && !escaped(doc, p)); p-- {
		}
		if p < 0 {
			return nil, ErrLayout
		}
		start = p
		for p--; p >= 0 && isSpace(doc[p]); p-- {
		}
	}
	if p < 0 {
		return nil, ErrLayout
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

// LineIndent returns the whitespace that starts the line holding pos.
func LineIndent(doc []byte, pos int) string { return lineIndent(doc, pos) }

func lineIndent(doc []byte, pos int) string {
	start := bytes.LastIndexByte(doc[:pos], '\n') + 1
	end := start
	for end < len(doc) && (doc[end] == ' ' || doc[end] == '\t') {
		end++
	}
	return string(doc[start:end])
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

// render encodes v as JSON without HTML escaping (commands keep their && and
// <), indented for a value that starts on a line indented by indent, or on
// one line when flat.
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

// lineEndings gives text, written with \n, the layout's line ending. (JSON
// strings cannot hold a raw newline, so every \n in text is a line break.)
func (l Layout) lineEndings(text string) string {
	if l.CRLF {
		return strings.ReplaceAll(text, "\n", "\r\n")
	}
	return text
}

// splitPath splits "a.b.c" into "a.b" and "c".
func splitPath(path string) (string, string) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return "", path
	}
	return path[:i], path[i+1:]
}
