package state

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/safefile"
)

// CountSession is a session start's one change to the tasks file,
// session_count + 1, made without parsing the tasks: under the transaction
// lock it asks accept whether the caller knows this version of the file
// (the hooks' cache does, by the file's identity), and edits the one
// member (editTop). written runs after the write, still under the lock,
// with the new count. ok is false, and nothing is written, when accept
// refuses or the file is not one this edit can handle: the caller then
// takes the full path (state.Update), which also restores a corrupt file.
//
// Why it is safe without the full parse: the bytes it edits are the bytes
// the cache was computed from (accept checks that under the lock), and the
// edit replaces one number at the top level.
func CountSession(dir string, accept func() bool, written func(n int)) (n int, ok bool, err error) {
	ok, err = editTop(dir, "session_count", accept, func(old []byte) ([]byte, bool) {
		var bumped bool
		n, bumped = nextCount(old)
		return strconv.AppendInt(nil, int64(n), 10), bumped
	}, func() {
		if written != nil {
			written(n)
		}
	})
	if !ok {
		return 0, false, err
	}
	return n, true, nil
}

// SetLastSession is a session end's one change to the tasks file,
// last_session = at, made like CountSession's: without parsing the tasks,
// when accept takes the file as it is.
func SetLastSession(dir, at string, accept func() bool, written func()) (ok bool, err error) {
	return editTop(dir, "last_session", accept, func(old []byte) ([]byte, bool) {
		return stringValue(old, at)
	}, written)
}

// tailSize is how much of the tasks file's end editTop reads first: the
// harness writes the top-level members after the task list, so the member
// is found there unless a hand edit moved it.
const tailSize = 64 << 10

// editTop replaces the value of the top-level member name of the tasks
// file with value(old) under the transaction lock, as every write does: the
// file (synced), its backup and the record. written runs after the write,
// still under the lock. ok is false, and nothing is written, when accept
// refuses or the member cannot be so edited.
//
// What it reads and writes is proportional to the change, not to the
// state: the member is looked for in the file's last 64 KiB (the whole
// file only when it is not there), and a new value of the old one's length
// (a count of as many digits, a timestamp for a timestamp: nearly every
// session's start and end) is written over the old one in place
// (patchInPlace) instead of rewriting the file and its two copies.
func editTop(dir, name string, accept func() bool, value func(old []byte) ([]byte, bool), written func()) (ok bool, err error) {
	unlock, err := lock.Tx(dir)
	if err != nil {
		return false, failure.Wrap(failure.EnvSetup, err, "%v", err)
	}
	defer unlock()
	removeStaleTemps(dir)
	if !accept() {
		return false, nil
	}
	path := Path(dir)
	at, old, size, found := locateTop(path, name)
	if !found {
		return false, nil
	}
	nv, ok := value(old)
	if !ok {
		return false, nil
	}
	if len(nv) == len(old) {
		if patched, err := patchInPlace(dir, size, at, old, nv); err != nil {
			return false, err
		} else if patched {
			if written != nil {
				written()
			}
			return true, nil
		}
	}
	doc, err := safefile.ReadFile(path, MaxFileSize)
	if err != nil {
		return false, nil
	}
	edited, ok := spliceTop(doc, name, value)
	if !ok {
		return false, nil
	}
	if err := writeEdited(dir, edited); err != nil {
		return false, err
	}
	if written != nil {
		written()
	}
	return true, nil
}

// locateTop finds the value of the top-level member name in the tasks
// file at path, reading as little of it as it can: its last 4 KiB (where
// the harness writes the member), then its first (where other tools put
// it), the same with 64 KiB, then all of it. It returns the value's offset and bytes, and the
// file's size.
func locateTop(path, name string) (at int64, value []byte, size int64, ok bool) {
	f, err := safefile.Open(path)
	if err != nil {
		return 0, nil, 0, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, nil, 0, false
	}
	size = fi.Size()
	read := func(off, n int64) []byte {
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, off); err != nil {
			return nil
		}
		return buf
	}
	key := []byte(`"` + name + `"`)
	// A page first: the member is usually in the last few lines, and each
	// page read into fresh memory costs a fresh process a page fault.
	for _, n := range [...]int64{4 << 10, tailSize} {
		if size <= 2*n {
			break
		}
		off := size - n
		if tail := read(off, n); tail != nil {
			if k := bytes.LastIndex(tail, key); k >= 0 && closesTop(tail[k:]) {
				if i, j, ok := valueSpan(tail, k+len(key)); ok {
					return off + int64(i), tail[i:j], size, true
				}
			}
		}
		if head := read(0, n); head != nil {
			if k := keyAtTop(head, key); k >= 0 {
				if i, j, ok := valueSpan(head, k+len(key)); ok && j < len(head) {
					return int64(i), head[i:j], size, true
				}
			}
		}
	}
	doc := read(0, size)
	if doc == nil {
		return 0, nil, 0, false
	}
	i, j, ok := topValue(doc, name, false)
	if !ok {
		return 0, nil, 0, false
	}
	return int64(i), doc[i:j], size, true
}

// topValue finds the value of the top-level member name of doc, a whole
// JSON document. The harness writes the member after the task list; files
// made by other tools have it before, so it is looked for in both places:
// the key's last occurrence in the document's last 64 KiB, accepted when
// the text after it closes exactly the top-level object, else the first
// occurrence at the top level counted from the document's start (a scan
// that stops there). valid says doc is known to be valid JSON (a state
// the harness parsed): that scan needs it, and checking it again would
// cost a pass over a large document. It returns the value's span.
func topValue(doc []byte, name string, valid bool) (start, end int, ok bool) {
	key := []byte(`"` + name + `"`)
	tail := max(0, len(doc)-tailSize)
	if at := bytes.LastIndex(doc[tail:], key); at >= 0 && closesTop(doc[tail+at:]) {
		return valueSpan(doc, tail+at+len(key))
	}
	if !valid && !gjson.ValidBytes(doc) {
		return 0, 0, false
	}
	if at := keyAtTop(doc, key); at >= 0 {
		return valueSpan(doc, at+len(key))
	}
	return 0, 0, false
}

// keyAtTop returns where key, a quoted member name, is a key of doc's
// top-level object, scanning from doc's start (which must be the
// document's); -1 when it is not.
func keyAtTop(doc, key []byte) int {
	found := -1
	structure(doc, func(i int, c byte, depth int) bool {
		if c != '"' || depth != 1 || !bytes.HasPrefix(doc[i:], key) {
			return true
		}
		j := i + len(key)
		for j < len(doc) && isSpace(doc[j]) {
			j++
		}
		if j < len(doc) && doc[j] == ':' {
			found = i
			return false
		}
		return true
	})
	return found
}

// valueSpan is the span of the value after a member's key, which ends at
// i: a string, or a plain value (number, true, false, null).
func valueSpan(doc []byte, i int) (start, end int, ok bool) {
	for i < len(doc) && isSpace(doc[i]) {
		i++
	}
	if i >= len(doc) || doc[i] != ':' {
		return 0, 0, false
	}
	i++
	for i < len(doc) && isSpace(doc[i]) {
		i++
	}
	j := i
	if j < len(doc) && doc[j] == '"' {
		for j++; j < len(doc) && doc[j] != '"'; j++ {
			if doc[j] == '\\' {
				j++
			}
		}
		if j >= len(doc) {
			return 0, 0, false
		}
		j++
	} else {
		for j < len(doc) && doc[j] != ',' && doc[j] != '}' && !isSpace(doc[j]) {
			j++
		}
	}
	if j == i {
		return 0, 0, false
	}
	return i, j, true
}

// spliceTop returns doc with the value of its top-level member name
// replaced by value(old).
func spliceTop(doc []byte, name string, value func(old []byte) ([]byte, bool)) ([]byte, bool) {
	i, j, ok := topValue(doc, name, false)
	if !ok {
		return nil, false
	}
	nv, ok := value(doc[i:j])
	if !ok {
		return nil, false
	}
	edited := make([]byte, 0, len(doc)+len(nv)-(j-i))
	return append(append(append(edited, doc[:i]...), nv...), doc[j:]...), true
}

// stringValue is the new text of a member, now null or a string, set to
// the string v (plain characters only: a timestamp).
func stringValue(old []byte, v string) ([]byte, bool) {
	if strings.ContainsAny(v, "\"\\") || (string(old) != "null" && (len(old) < 2 || old[0] != '"')) {
		return nil, false
	}
	return []byte(`"` + v + `"`), true
}

// nextCount is the count after old, the text of a plain whole number (ok
// false otherwise: the caller then edits through the parser).
func nextCount(old []byte) (n int, ok bool) {
	if len(old) == 0 || len(old) > 9 {
		return 0, false
	}
	for _, c := range old {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	k, err := strconv.Atoi(string(old))
	if err != nil {
		return 0, false
	}
	return k + 1, true
}

// closesTop reports whether tail (a suffix of a JSON document that begins
// at a key) leaves exactly one level: the document's top-level object,
// closed by its last non-space byte.
func closesTop(tail []byte) bool {
	closes := false
	structure(tail, func(i int, c byte, depth int) bool {
		if (c != '}' && c != ']') || depth > 0 {
			return true
		}
		closes = c == '}' && len(bytes.TrimLeft(tail[i+1:], " \t\r\n")) == 0
		return false
	})
	return closes
}

// structure calls at for each byte of doc that opens or closes an object
// or array, or opens a string, with the nesting depth before it (counted
// from doc's start), until at returns false. Bytes inside strings are
// skipped.
func structure(doc []byte, at func(i int, c byte, depth int) bool) {
	depth, inString := 0, false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
			continue
		case c == '"':
			inString = true
		case c != '{' && c != '[' && c != '}' && c != ']':
			continue
		}
		if !at(i, c, depth) {
			return
		}
		switch c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ParseTask parses the task with the given id out of the tasks file's text
// doc, nil when there is none (or it does not parse): the hooks read one
// task this way without parsing the others.
func ParseTask(doc []byte, id string) *Task {
	if ts := ParseTasks(doc, []string{id}); len(ts) == 1 {
		return &ts[0]
	}
	return nil
}

// ParseTasks parses the tasks with the given ids out of doc in one pass,
// in the file's order; a task that does not parse is left out.
func ParseTasks(doc []byte, ids []string) []Task {
	var found []Task
	i := -1
	gjson.GetBytes(doc, "tasks").ForEach(func(_, v gjson.Result) bool {
		i++
		if !slices.Contains(ids, v.Get("id").Str) {
			return true
		}
		p := parser{path: FileName}
		if t := p.task(v, i); p.err == nil {
			found = append(found, t)
		}
		return len(found) < len(ids)
	})
	return found
}
