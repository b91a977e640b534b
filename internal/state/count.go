package state

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
)

// CountSession is a session start's one change to the tasks file,
// session_count + 1, made without parsing the tasks: under the transaction
// lock it reads the file, asks accept whether the caller knows this version
// of it (the hooks' cache does, by the file's identity), edits the one
// member in place, and writes the file, its backup and the record as every
// write does. written runs after the write, still under the lock, with the
// new count. ok is false, and nothing is written, when accept refuses or
// the file is not one this edit can handle: the caller then takes the full
// path (state.Update), which also restores a corrupt file.
//
// Why it is safe without the full parse: the bytes it edits are the bytes
// the cache was computed from (accept checks that under the lock), and the
// edit replaces one number at the top level, which is read back.
func CountSession(dir string, accept func() bool, written func(n int)) (n int, doc []byte, ok bool, err error) {
	doc, ok, err = editTop(dir, accept, func(doc []byte) ([]byte, bool) {
		var edited []byte
		edited, n, ok = bumpCount(doc)
		return edited, ok
	}, func() {
		if written != nil {
			written(n)
		}
	})
	if !ok {
		return 0, nil, false, err
	}
	return n, doc, true, nil
}

// SetLastSession is a session end's one change to the tasks file,
// last_session = at, made like CountSession's: in place, without parsing
// the tasks, when accept takes the file as it is.
func SetLastSession(dir, at string, accept func() bool, written func()) (ok bool, err error) {
	_, ok, err = editTop(dir, accept, func(doc []byte) ([]byte, bool) {
		return setTopString(doc, "last_session", at)
	}, written)
	return ok, err
}

// editTop makes one in-place edit of a top-level member of the tasks file
// under the transaction lock and writes the file, its backup and the record
// as every write does; written runs after the write, still under the lock.
// ok is false, and nothing is written, when accept refuses or edit cannot
// make its change.
func editTop(dir string, accept func() bool, edit func([]byte) ([]byte, bool), written func()) (doc []byte, ok bool, err error) {
	unlock, err := lock.Tx(dir)
	if err != nil {
		return nil, false, failure.Wrap(failure.EnvSetup, err, "%v", err)
	}
	defer unlock()
	if !accept() {
		return nil, false, nil
	}
	path := Path(dir)
	doc, err = os.ReadFile(path)
	if err != nil {
		return nil, false, nil
	}
	edited, ok := edit(doc)
	if !ok {
		return nil, false, nil
	}
	mode := fileMode(path)
	if err := atomicfile.WriteFile(path, edited, mode); err != nil {
		return nil, false, failure.Wrap(failure.EnvSetup, err, "cannot write %s: %v", path, err)
	}
	if err := backup(dir, edited, mode); err != nil {
		return nil, false, failure.Wrap(failure.EnvSetup, err, "cannot write %s: %v", BackupPath(dir), err)
	}
	record.SaveTasks(dir, edited, root.Active(dir))
	if written != nil {
		written()
	}
	return edited, true, nil
}

// topValue finds the value of the top-level member name of doc: the last
// occurrence of the key, accepted only when the text after it closes
// exactly the top-level object (so it is a member of that object, not of a
// task). It returns the value's span.
func topValue(doc []byte, name string) (start, end int, ok bool) {
	key := []byte(`"` + name + `"`)
	at := bytes.LastIndex(doc, key)
	if at < 0 || !closesTop(doc[at:]) {
		return 0, 0, false
	}
	i := at + len(key)
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

// setTopString returns doc with the top-level member name, now null or a
// string, set to the string v (plain characters only: a timestamp).
func setTopString(doc []byte, name, v string) ([]byte, bool) {
	i, j, ok := topValue(doc, name)
	if !ok || strings.ContainsAny(v, "\"\\") {
		return nil, false
	}
	old := string(doc[i:j])
	if old != "null" && (len(old) < 2 || old[0] != '"') {
		return nil, false
	}
	edited := make([]byte, 0, len(doc)+len(v)+2)
	edited = append(edited, doc[:i]...)
	edited = append(edited, '"')
	edited = append(edited, v...)
	edited = append(edited, '"')
	return append(edited, doc[j:]...), true
}

// bumpCount returns doc with the top-level session_count one higher, and
// the new count. The harness writes session_count after the task list, so
// it is looked for from the end: the last "session_count" key, accepted
// only when the text after it closes exactly the top-level object (it is
// a member of that object, not of a task) and its value is a plain whole
// number. The rest of doc is untouched. ok is false when doc is not so:
// the caller then edits through the parser.
func bumpCount(doc []byte) (edited []byte, n int, ok bool) {
	i, j, ok := topValue(doc, "session_count")
	if !ok || j-i > 9 {
		return nil, 0, false
	}
	for _, c := range doc[i:j] {
		if c < '0' || c > '9' {
			return nil, 0, false
		}
	}
	old, err := strconv.Atoi(string(doc[i:j]))
	if err != nil {
		return nil, 0, false
	}
	n = old + 1
	edited = make([]byte, 0, len(doc)+1)
	edited = append(edited, doc[:i]...)
	edited = strconv.AppendInt(edited, int64(n), 10)
	edited = append(edited, doc[j:]...)
	return edited, n, true
}

// closesTop reports whether tail (a suffix of a JSON document that begins
// at a key) leaves exactly one level: the document's top-level object,
// closed by its last non-space byte.
func closesTop(tail []byte) bool {
	depth, inString := 0, false
	for i := 0; i < len(tail); i++ {
		c := tail[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth < 0 {
				for _, r := range tail[i+1:] {
					if !isSpace(r) {
						return false
					}
				}
				return c == '}'
			}
		}
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ParseTask parses the task with the given id out of the tasks file's text
// doc, nil when there is none (or it does not parse): the hooks read one
// task this way without parsing the others.
func ParseTask(doc []byte, id string) *Task {
	var found *Task
	i := -1
	gjson.GetBytes(doc, "tasks").ForEach(func(_, v gjson.Result) bool {
		i++
		if v.Get("id").Str != id {
			return true
		}
		p := parser{path: FileName}
		t := p.task(v, i)
		if p.err == nil {
			found = &t
		}
		return false
	})
	return found
}
