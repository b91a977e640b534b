// Package jsonobj writes and reads the harness's small JSON files (the hooks'
// summary of the state, a session's runtime and usage, the record's mark)
// without encoding/json. Those files are read and written by the hooks at
// every tool call and turn end, and encoding/json's first use in a process
// (reflecting over each type, building its field tables) costs a fresh hook
// process more than everything else it does: 150 to 250 µs for the summary
// alone, against a whole Stop hook of about 1 ms above a do-nothing binary.
//
// A Writer appends one object member by member, in the order the caller
// writes them, laid out exactly as json.Marshal (compact) or
// json.MarshalIndent(v, "", "  ") (indented) lays out a struct with the
// same members, so the files keep their shape. Read checks a file before
// its members are looked up with gjson.
package jsonobj

import (
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/jsondepth"
)

// Writer builds one JSON object. The zero value is not ready: use New.
type Writer struct {
	b      []byte
	indent bool
	// keepHTML leaves <, > and & as they are (json.Encoder's
	// SetEscapeHTML(false)).
	keepHTML bool
	open     []frame // the objects being written, innermost last
}

// frame is an object being written: how many members it has so far (the
// first takes no comma) and how deep its members are indented.
type frame struct{ members, level int }

// New starts an object, indented by two spaces per level when indent is
// set (json.MarshalIndent's layout), compact otherwise (json.Marshal's).
func New(indent bool) *Writer {
	return &Writer{b: append(make([]byte, 0, 512), '{'), indent: indent, open: []frame{{level: 1}}}
}

// SetEscapeHTML says whether <, > and & in strings are escaped (the
// default), as json.Encoder's method of that name does.
func (w *Writer) SetEscapeHTML(on bool) { w.keepHTML = !on }

// str appends s as a JSON string.
func (w *Writer) str(s string) { w.b = appendString(w.b, s, !w.keepHTML) }

// key writes what comes before a member's value: the comma after the
// previous member, the line break and indentation, the quoted key.
func (w *Writer) key(k string) {
	top := &w.open[len(w.open)-1]
	if top.members > 0 {
		w.b = append(w.b, ',')
	}
	top.members++
	w.newline(top.level)
	w.str(k)
	w.b = append(w.b, ':')
	if w.indent {
		w.b = append(w.b, ' ')
	}
}

// level is how deep the current object's members are indented.
func (w *Writer) level() int { return w.open[len(w.open)-1].level }

// newline breaks the line and indents to level, when indenting.
func (w *Writer) newline(level int) {
	if !w.indent {
		return
	}
	w.b = append(w.b, '\n')
	for range level {
		w.b = append(w.b, ' ', ' ')
	}
}

// Str writes a string member.
func (w *Writer) Str(k, v string) {
	w.key(k)
	w.str(v)
}

// Int writes a number member.
func (w *Writer) Int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

// Bool writes a boolean member.
func (w *Writer) Bool(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

// Strs writes a list of strings; nil is written as null, as encoding/json
// writes a nil slice.
func (w *Writer) Strs(k string, v []string) {
	w.list(k, len(v), v == nil, func(i int) { w.str(v[i]) })
}

// Objects writes a list of n objects, each written by each(i) between
// its braces (members only); nil is null, as for Strs.
func (w *Writer) Objects(k string, n int, isNil bool, each func(i int)) {
	w.list(k, n, isNil, func(i int) {
		w.b = append(w.b, '{')
		w.open = append(w.open, frame{level: w.level() + 2})
		each(i)
		w.Close()
	})
}

// list writes a list member of n elements, each written by elem(i).
func (w *Writer) list(k string, n int, isNil bool, elem func(i int)) {
	w.key(k)
	switch {
	case isNil:
		w.b = append(w.b, "null"...)
		return
	case n == 0:
		w.b = append(w.b, '[', ']')
		return
	}
	w.b = append(w.b, '[')
	level := w.level()
	for i := range n {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.newline(level + 1)
		elem(i)
	}
	w.newline(level)
	w.b = append(w.b, ']')
}

// Raw writes a member whose value is the JSON text raw, as it is.
func (w *Writer) Raw(k string, raw []byte) {
	w.key(k)
	w.b = append(w.b, raw...)
}

// Open starts an object member; Close ends it.
func (w *Writer) Open(k string) {
	w.key(k)
	w.b = append(w.b, '{')
	w.open = append(w.open, frame{level: w.level() + 1})
}

// Close ends the object Open started.
func (w *Writer) Close() {
	top := w.open[len(w.open)-1]
	if top.members > 0 {
		w.newline(top.level - 1)
	}
	w.open = w.open[:len(w.open)-1]
	w.b = append(w.b, '}')
}

// Bytes ends the object (and any left open) and returns its text.
func (w *Writer) Bytes() []byte {
	for len(w.open) > 0 {
		w.Close()
	}
	return w.b
}

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string exactly as encoding/json writes
// it: quotes, backslashes and control characters escaped, <, > and &
// written as \u003c, \u003e and \u0026, U+2028 and U+2029 escaped, and
// bytes that are not UTF-8 replaced by U+FFFD.
func AppendString(b []byte, s string) []byte { return appendString(b, s, true) }

// appendString is AppendString, with <, > and & left as they are unless
// html is set.
func appendString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Read returns the object the text data holds; ok is false when data is not
// one JSON object (or nests deeper than any harness file does), so a
// damaged or foreign file is read as missing.
func Read(data []byte) (obj gjson.Result, ok bool) {
	if jsondepth.Exceeds(data, jsondepth.Max) || !gjson.ValidBytes(data) {
		return gjson.Result{}, false
	}
	obj = gjson.ParseBytes(data)
	return obj, obj.IsObject()
}

// Strs reads a list of strings: nil when v is not a list, and the
// non-string elements left out.
func Strs(v gjson.Result) []string {
	if !v.IsArray() {
		return nil
	}
	out := []string{}
	v.ForEach(func(_, e gjson.Result) bool {
		if e.Type == gjson.String {
			out = append(out, e.Str)
		}
		return true
	})
	return out
}

// sector is the unit a storage device writes whole.
const sector = 512

// InPlace reports whether the JSON text now may be written over was in
// place: the two are of one length, every byte that differs is one that
// holds no JSON structure in either text (no quote, bracket, brace, colon,
// comma, backslash or white space: they sit at the same places in both,
// so every token begins and ends where it did), and the first
// and last of them lie inside one 512-byte sector. Such a write leaves
// whatever a crash or a reader catches half-way valid JSON of the same
// shape: each changed member reads as one value or the other, or, for a
// moment, as a mix of their digits or letters. When it reports false (the
// same text included), the caller replaces the file whole.
func InPlace(was, now []byte) bool {
	if len(was) != len(now) {
		return false
	}
	first, last := -1, -1
	for i := range was {
		if was[i] == now[i] {
			continue
		}
		if structural(was[i]) || structural(now[i]) {
			return false
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	return first >= 0 && first/sector == last/sector
}

// structural reports whether c shapes JSON text: a quote, bracket, brace,
// colon, comma, backslash or white space (which ends a number).
func structural(c byte) bool {
	switch c {
	case '"', '[', ']', '{', '}', ':', ',', '\\', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
