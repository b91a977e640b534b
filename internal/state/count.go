package state

import (
	"bytes"
	"os"
	"strconv"

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
	unlock, err := lock.Tx(dir)
	if err != nil {
		return 0, nil, false, failure.Wrap(failure.EnvSetup, err, "%v", err)
	}
	defer unlock()
	if !accept() {
		return 0, nil, false, nil
	}
	path := Path(dir)
	doc, err = os.ReadFile(path)
	if err != nil {
		return 0, nil, false, nil
	}
	edited, n, ok := bumpCount(doc)
	if !ok {
		return 0, nil, false, nil
	}
	mode := fileMode(path)
	if err := atomicfile.WriteFile(path, edited, mode); err != nil {
		return 0, nil, false, failure.Wrap(failure.EnvSetup, err, "cannot write %s: %v", path, err)
	}
	if err := backup(dir, edited, mode); err != nil {
		return 0, nil, false, failure.Wrap(failure.EnvSetup, err, "cannot write %s: %v", BackupPath(dir), err)
	}
	record.SaveTasks(dir, edited, root.Active(dir))
	if written != nil {
		written(n)
	}
	return n, edited, true, nil
}

// bumpCount returns doc with the top-level session_count one higher, and
// the new count. The harness writes session_count after the task list, so
// it is looked for from the end: the last "session_count" key, accepted
// only when the text after it closes exactly the top-level object (it is
// a member of that object, not of a task) and its value is a plain whole
// number. The rest of doc is untouched. ok is false when doc is not so:
// the caller then edits through the parser.
func bumpCount(doc []byte) (edited []byte, n int, ok bool) {
	key := []byte(`"session_count"`)
	at := bytes.LastIndex(doc, key)
	if at < 0 || !closesTop(doc[at:]) {
		return nil, 0, false
	}
	i := at + len(key)
	for i < len(doc) && isSpace(doc[i]) {
		i++
	}
	if i >= len(doc) || doc[i] != ':' {
		return nil, 0, false
	}
	i++
	for i < len(doc) && isSpace(doc[i]) {
		i++
	}
	j := i
	for j < len(doc) && doc[j] >= '0' && doc[j] <= '9' {
		j++
	}
	if j == i || j-i > 9 || (j < len(doc) && doc[j] != ',' && doc[j] != '}' && !isSpace(doc[j])) {
		return nil, 0, false
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
