package state

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// This file edits JSON text in place. sjson alone keeps unknown fields but
// glues new members onto a pretty file as compact fragments; set keeps the
// layout a human (or the harness) wrote: a replaced value stays where it was,
// a new member or array element goes on its own line, indented like its
// siblings. Bytes outside the edited value never change.

// set sets path (gjson/sjson syntax; a final ".-1" appends to an array) to v.
func set(doc []byte, path string, v any) ([]byte, error) {
	return setIndented(doc, path, v, indentUnit(doc))
}

// setIndented is set with the file's indentation step given: doc may be a
// piece of the file (one task) whose own first indented line says nothing
// about the file's step.
func setIndented(doc []byte, path string, v any, unit string) ([]byte, error) {
	if strings.HasSuffix(path, ".-1") {
		arrPath := strings.TrimSuffix(path, ".-1")
		arr := gjson.GetBytes(doc, arrPath)
		if !arr.Exists() || !arr.IsArray() {
			return setIndented(doc, arrPath, []any{v}, unit)
		}
		return insert(doc, arr, "", v, unit)
	}
	if r := gjson.GetBytes(doc, path); r.Exists() {
		if r.Index <= 0 || r.Index+len(r.Raw) > len(doc) || string(doc[r.Index:r.Index+len(r.Raw)]) != r.Raw {
			return sjson.SetBytes(doc, path, v)
		}
		val, err := render(v, lineIndent(doc, r.Index), unit)
		if err != nil {
			return nil, err
		}
		return splice(doc, r.Index, r.Index+len(r.Raw), val), nil
	}
	parentPath, key := splitPath(path)
	var parent gjson.Result
	if parentPath == "" {
		parent = topLevel(doc)
	} else {
		parent = gjson.GetBytes(doc, parentPath)
	}
	if parent.Exists() && parent.IsObject() && parent.Index >= 0 {
		return insert(doc, parent, key, v, unit)
	}
	if parentPath == "" {
		return sjson.SetBytes(doc, path, v)
	}
	return setIndented(doc, parentPath, map[string]any{key: v}, unit)
}

// topLevel returns the document's outer object with Raw and Index covering
// exactly its braces (gjson's top-level Raw keeps surrounding whitespace).
func topLevel(doc []byte) gjson.Result {
	start := bytes.IndexByte(doc, '{')
	end := bytes.LastIndexByte(doc, '}')
	if start < 0 || end < start {
		return gjson.Result{}
	}
	r := gjson.ParseBytes(doc[start : end+1])
	r.Index = start
	return r
}

// insert adds v as a new member key (objects) or element (arrays, key "") at
// the end of the container c.
func insert(doc []byte, c gjson.Result, key string, v any, unit string) ([]byte, error) {
	start, end := c.Index, c.Index+len(c.Raw)
	if start < 0 || end > len(doc) || string(doc[start:end]) != c.Raw {
		return nil, errLayout
	}
	raw := c.Raw
	closeAt := end - 1 // the closing bracket
	empty := strings.TrimSpace(raw[1:len(raw)-1]) == ""
	multiline := strings.Contains(raw, "\n")
	var memberIndent, closeIndent string
	switch {
	case multiline && !empty:
		memberIndent = firstMemberIndent(raw)
		closeIndent = lineIndent(doc, closeAt)
	case multiline || unit != "":
		closeIndent = lineIndent(doc, start)
		memberIndent = closeIndent + unit
	}
	val, err := render(v, memberIndent, unit)
	if err != nil {
		return nil, err
	}
	member := val
	if key != "" {
		k, _ := json.Marshal(key)
		sep := ": "
		if !multiline && unit == "" {
			sep = ":"
		}
		member = string(k) + sep + val
	}
	if !multiline && !empty && unit == "" || !multiline && !empty {
		// A compact container stays compact.
		compact, err := render(v, "", "")
		if err != nil {
			return nil, err
		}
		if key != "" {
			k, _ := json.Marshal(key)
			compact = string(k) + ":" + compact
		}
		return splice(doc, closeAt, closeAt, ","+compact), nil
	}
	if empty {
		return splice(doc, start+1, closeAt, "\n"+memberIndent+member+"\n"+closeIndent), nil
	}
	last := closeAt - 1
	for last > start && isSpace(doc[last]) {
		last--
	}
	return splice(doc, last+1, last+1, ",\n"+memberIndent+member), nil
}

type layoutError struct{}

func (layoutError) Error() string { return "harness-tasks.json: cannot locate the value to edit" }

var errLayout = layoutError{}

// render encodes v as JSON without HTML escaping (commands keep their && and
// <), indented with unit and continuation lines prefixed by indent.
func render(v any, indent, unit string) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if unit != "" {
		enc.SetIndent(indent, unit)
	}
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimRight(buf.String(), "\n"), nil
}

func splice(doc []byte, from, to int, s string) []byte {
	out := make([]byte, 0, len(doc)-(to-from)+len(s))
	out = append(out, doc[:from]...)
	out = append(out, s...)
	return append(out, doc[to:]...)
}

// lineIndent returns the leading whitespace of the line holding offset i.
func lineIndent(doc []byte, i int) string {
	ls := bytes.LastIndexByte(doc[:i], '\n') + 1
	j := ls
	for j < len(doc) && (doc[j] == ' ' || doc[j] == '\t') {
		j++
	}
	return string(doc[ls:j])
}

// firstMemberIndent returns the indentation of a multi-line container's first
// member.
func firstMemberIndent(raw string) string {
	nl := strings.IndexByte(raw, '\n')
	if nl < 0 {
		return ""
	}
	rest := raw[nl+1:]
	return rest[:len(rest)-len(strings.TrimLeft(rest, " \t"))]
}

// indentUnit guesses the file's indentation step from its first indented line;
// "" means the file is compact.
func indentUnit(doc []byte) string {
	nl := bytes.IndexByte(doc, '\n')
	for nl >= 0 && nl+1 < len(doc) {
		rest := doc[nl+1:]
		j := 0
		for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t') {
			j++
		}
		if j > 0 {
			return string(rest[:j])
		}
		next := bytes.IndexByte(rest, '\n')
		if next < 0 {
			break
		}
		nl += 1 + next
	}
	if bytes.IndexByte(bytes.TrimSpace(doc), '\n') >= 0 {
		return "  "
	}
	return ""
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// splitPath splits "a.b.c" into "a.b" and "c".
func splitPath(path string) (string, string) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return "", path
	}
	return path[:i], path[i+1:]
}
