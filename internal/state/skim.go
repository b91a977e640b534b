package state

import (
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Skim reads from the text of a tasks file what the schedule and the
// hooks' summary need, in one pass and at a fraction of Parse's cost on a
// large state: the session fields, session_config, and every member of
// each task but the nested objects (validation, on_failure: their fields
// stay zero) and the checkpoints, which are counted, not read (a skimmed
// task holds as many zero checkpoints as the file has).
//
// It is for text whose schema is known to hold: a file the harness wrote
// after reading it back (the record's mark says so, internal/statecache).
// It does not check the text is JSON, nor look for duplicate members or
// ids; on text Parse accepts it reads what Parse reads. A skimmed state is
// read-only (Update never saves one); a task needed whole is read with
// Whole.
//
// The state's strings share raw's memory (a copy of a large file costs
// as much as reading it): the caller hands raw over and never changes it.
func Skim(raw []byte) (*State, error) {
	if len(raw) == 0 {
		return nil, &Corrupt{Path: FileName}
	}
	doc := shared(raw)
	i := skipSpace(doc, 0)
	p := parser{path: FileName}
	s := &State{raw: raw}
	var version, created, config, count, last gjson.Result
	var seen uint8
	first := func(bit uint8) bool { ok := seen&bit == 0; seen |= bit; return ok }
	value := func(r *gjson.Result, bit uint8, at int) int {
		end := skipValue(doc, at)
		if end > 0 && first(bit) {
			*r = gjson.Parse(doc[at:end])
		}
		return end
	}
	tasks := false
	end := members(doc, i, func(key string, at int) int {
		switch key {
		case "version":
			return value(&version, 1, at)
		case "created":
			return value(&created, 2, at)
		case "session_config":
			return value(&config, 4, at)
		case "session_count":
			return value(&count, 8, at)
		case "last_session":
			return value(&last, 16, at)
		case "tasks":
			if !first(32) || doc[at] != '[' {
				break
			}
			tasks = true
			list := at
			return elements(doc, at, func(at int) int {
				t, end := skimTask(&p, doc, at)
				if end < 0 {
					return -1
				}
				if len(s.Tasks) == skimSample {
					s.reserve(skimSample * (len(doc) - list) / (end - list))
				}
				s.Tasks = append(s.Tasks, t)
				s.skimmed = append(s.skimmed, doc[at:end])
				return end
			})
		}
		return skipValue(doc, at)
	})
	if end < 0 {
		return nil, &Corrupt{Path: FileName}
	}
	s.Version = p.intAt(version, "version", 0)
	s.Created = p.strAt(created, "created")
	s.SessionCount = p.intAt(count, "session_count", 0)
	s.LastSession = p.strAt(last, "last_session")
	s.Config = p.config(config)
	if !tasks {
		p.fail("tasks", "must be a list")
	}
	if p.err != nil {
		return nil, p.err
	}
	return s, nil
}

// skimSample is how many tasks Skim reads before it sizes the task list for
// the rest: growing a 10,000-task list by doubling copies it over and over
// and leaves the collector the copies to scan.
const skimSample = 32

// reserve makes room for n tasks in all.
func (s *State) reserve(n int) {
	if n <= cap(s.Tasks) {
		return
	}
	n += n / 8 // the tasks ahead may be shorter than the first ones
	s.Tasks = append(make([]Task, 0, n), s.Tasks...)
	s.skimmed = append(make([]string, 0, n), s.skimmed...)
}

// Whole returns task i of s read in full: parsed from its text when s was
// skimmed, else as it is. An error names what does not parse.
func (s *State) Whole(i int) (Task, error) {
	if s.skimmed == nil {
		return s.Tasks[i], nil
	}
	p := parser{path: FileName}
	t := p.task(gjson.Parse(s.skimmed[i]), i)
	if p.err != nil {
		return Task{}, p.err
	}
	return t, nil
}

// skimTask reads the task object at doc[at] as Skim does, and returns
// where it ends (-1: not an object).
func skimTask(p *parser, doc string, at int) (Task, int) {
	t := Task{MaxAttempts: DefaultMaxAttempts}
	var seen uint64
	end := members(doc, at, func(key string, at int) int {
		var bit uint64
		i, plain := plainField(key)
		switch {
		case key == "status":
			bit = 1 << 63
		case key == "checkpoints":
			bit = 1 << 62
		case plain:
			bit = 1 << i
		}
		if bit == 0 || seen&bit != 0 {
			return skipValue(doc, at) // not read, or a duplicate (the first counts, as in gjson)
		}
		seen |= bit
		if key == "checkpoints" {
			if doc[at] != '[' {
				return skipValue(doc, at)
			}
			n := 0
			end := elements(doc, at, func(at int) int { n++; return skipValue(doc, at) })
			if n > 0 {
				t.Checkpoints = make([]Checkpoint, n)
			}
			return end
		}
		end := skipValue(doc, at)
		if end < 0 {
			return -1
		}
		if key == "status" {
			t.Status = p.strAt(gjson.Parse(doc[at:end]), "status")
		} else {
			taskSchema[i].readText(p, &t, doc[at:end])
		}
		return end
	})
	return t, end
}

// readText sets the member from its JSON text v as read does, decoding the
// common cases in place (a string without escapes, null, a whole number,
// a list of such strings) and anything else through read.
func (f *taskField) readText(p *parser, t *Task, v string) {
	switch f.kind {
	case kindText, kindNullable:
		if str, ok := plainString(v); ok {
			*f.text(t) = str
			return
		}
		if v == "null" {
			*f.text(t) = ""
			return
		}
	case kindCount:
		if n, ok := smallCount(v); ok {
			*f.count(t) = n
			return
		}
	case kindList, kindPaths:
		if v == "null" {
			*f.list(t) = nil
			return
		}
		if list, ok := plainStrings(v); ok {
			*f.list(t) = list
			return
		}
	}
	f.read(p, t, gjson.Parse(v))
}

// plainString is the value of v, the text of a JSON string, when it has no
// escapes.
func plainString(v string) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	if strings.IndexByte(body, '\\') >= 0 || strings.IndexByte(body, '"') >= 0 {
		return "", false
	}
	return body, true
}

// smallCount is the value of v when it is the text of a whole number of
// at most nine digits.
func smallCount(v string) (int, bool) {
	if len(v) == 0 || len(v) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// plainStrings is the list v, the text of a JSON array, when every element
// is a string without escapes ([]string{} for an empty list, as read
// gives).
func plainStrings(v string) ([]string, bool) {
	list := []string{}
	ok := true
	end := elements(v, 0, func(at int) int {
		e := skipValue(v, at)
		if e < 0 {
			ok = false
			return -1
		}
		str, plain := plainString(v[at:e])
		if !plain {
			ok = false
			return -1
		}
		list = append(list, str)
		return e
	})
	return list, ok && end == len(v)
}

// The scanner below walks JSON text known to be valid, by its structure
// alone, once: a value the caller reads is handed over where it starts,
// and the caller says where it ended; one it does not read is skipped,
// a string's body with one search for its closing quote.

// members calls fn with each member of the object that opens at doc[i]:
// its key, decoded, and where its value starts; fn returns where the value
// ends. members returns where the object ends, -1 when the text is not an
// object (or fn returned -1).
func members(doc string, i int, fn func(key string, at int) (end int)) int {
	if i >= len(doc) || doc[i] != '{' {
		return -1
	}
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		return i + 1
	}
	for i < len(doc) && doc[i] == '"' {
		end := skipString(doc, i)
		if end < 0 {
			return -1
		}
		key := doc[i+1 : end-1]
		if strings.IndexByte(key, '\\') >= 0 {
			key = gjson.Parse(doc[i:end]).Str
		}
		i = skipSpace(doc, end)
		if i >= len(doc) || doc[i] != ':' {
			return -1
		}
		i = skipSpace(doc, i+1)
		if i >= len(doc) {
			return -1
		}
		if i = fn(key, i); i < 0 {
			return -1
		}
		var more bool
		if i, more = after(doc, i, '}'); !more {
			return i
		}
	}
	return -1
}

// elements calls fn with where each element of the array that opens at
// doc[i] starts; fn returns where it ends. elements returns where the
// array ends, -1 when the text is not an array (or fn returned -1).
func elements(doc string, i int, fn func(at int) (end int)) int {
	if i >= len(doc) || doc[i] != '[' {
		return -1
	}
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == ']' {
		return i + 1
	}
	for i < len(doc) {
		if i = fn(i); i < 0 {
			return -1
		}
		var more bool
		if i, more = after(doc, i, ']'); !more {
			return i
		}
	}
	return -1
}

// after reads what follows a member or an element that ends at doc[i]: a
// comma, and more follows (where it starts), or the container's closing
// byte (where the container ends); -1 for anything else.
func after(doc string, i int, closing byte) (next int, more bool) {
	i = skipSpace(doc, i)
	switch {
	case i >= len(doc):
		return -1, false
	case doc[i] == closing:
		return i + 1, false
	case doc[i] == ',':
		return skipSpace(doc, i+1), true
	}
	return -1, false
}

// structural marks the bytes skipValue stops at inside a container.
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// skipValue returns where the value that starts at doc[i] ends, -1 when
// the text ends first.
func skipValue(doc string, i int) int {
	if i >= len(doc) {
		return -1
	}
	switch doc[i] {
	case '"':
		return skipString(doc, i)
	case '{', '[':
		depth := 0
		for i < len(doc) {
			for !structural[doc[i]] {
				if i++; i == len(doc) {
					return -1
				}
			}
			switch doc[i] {
			case '"':
				if i = skipString(doc, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			default:
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	j := i
	for j < len(doc) && doc[j] != ',' && doc[j] != '}' && doc[j] != ']' && !isSpace(doc[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// skipString returns where the string that opens at doc[i] ends (after
// its closing quote), -1 when it does not close.
func skipString(doc string, i int) int {
	// Most strings are short (keys, ids, times): look at their bytes
	// first, before calling the search.
	for j := i + 1; j < len(doc) && j < i+24; j++ {
		switch doc[j] {
		case '"':
			return j + 1
		case '\\':
			return skipEscaped(doc, i)
		}
	}
	return skipEscaped(doc, i)
}

// skipEscaped is skipString by search, minding escaped quotes.
func skipEscaped(doc string, i int) int {
	for j := i + 1; ; {
		k := strings.IndexByte(doc[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		backslashes := 0
		for b := j - 1; b > i && doc[b] == '\\'; b-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return j + 1
		}
		j++
	}
}

func skipSpace(doc string, i int) int {
	for i < len(doc) && isSpace(doc[i]) {
		i++
	}
	return i
}

// shared is raw as a string without a copy: for text the caller hands
// over and never changes (Parse, Skim, a write's read-back).
func shared(raw []byte) string { return unsafe.String(unsafe.SliceData(raw), len(raw)) }
