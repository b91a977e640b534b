package state

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/jsonedit"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
)

// AddTask appends t to the state; it is written on save with every field of
// the protocol's schema.
func (s *State) AddTask(t Task) { s.Tasks = append(s.Tasks, t) }

// RemoveTasks takes the tasks with the given ids out of the state (and out
// of the file, when it is saved). An update that removes tasks changes
// nothing else.
func (s *State) RemoveTasks(ids ...string) {
	drop := map[string]bool{}
	for _, id := range ids {
		drop[id] = true
	}
	kept := s.Tasks[:0:0]
	for i, t := range s.Tasks {
		if drop[t.ID] {
			s.removed = append(s.removed, i)
			continue
		}
		kept = append(kept, t)
	}
	s.Tasks = kept
}

// configEdit is one session_config member SetConfig changes.
type configEdit struct {
	name string
	v    any
}

// SetConfig sets the member name of session_config to v (nil removes it)
// when the state is written; the caller also sets the matching s.Config
// field. Only a person's commands change the configuration (see
// `harness budget`).
func (s *State) SetConfig(name string, v any) {
	s.configSet = append(s.configSet, configEdit{name, v})
}

// Changed reports whether the state differs from what was read.
func (s *State) Changed() bool {
	edited, _, err := s.apply()
	return err == nil && string(edited) != string(s.raw)
}

// save writes the changes made to s since it was read, if any.
func (s *State) save() (wrote bool, err error) {
	edited, touched, err := s.apply()
	if err != nil {
		return false, failure.Wrap(failure.EnvSetup, err, "cannot edit %s: %v", Path(s.Dir), err)
	}
	if string(edited) == string(s.raw) {
		return false, nil
	}
	if err := s.readBack(edited, touched); err != nil {
		// Never write a file the harness itself could not read back.
		return false, failure.Wrap(failure.EnvSetup, err, "refusing to write an invalid %s: %v", FileName, err)
	}
	patched := false
	if at, old, nv, small := oneSpan(s.raw, edited); small {
		if patched, err = patchInPlace(s.Dir, int64(len(s.raw)), at, old, nv); err != nil {
			return false, err
		}
	}
	if !patched {
		if err := writeEdited(s.Dir, edited); err != nil {
			return false, err
		}
	}
	s.raw = edited
	s.snapshot()
	return true, nil
}

// apply returns the file text with every change to s since it was read, and
// the indexes of the tasks it changed or added.
func (s *State) apply() (doc []byte, touched []int, err error) {
	if !s.snapped {
		return nil, nil, fmt.Errorf("state was loaded read-only; change it through state.Update")
	}
	doc = s.raw
	if s.SessionCount != s.origCount {
		if doc, err = setTop(doc, "session_count", s.SessionCount); err != nil {
			return nil, nil, err
		}
	}
	if s.LastSession != s.origLast {
		if doc, err = setTop(doc, "last_session", nullable(s.LastSession)); err != nil {
			return nil, nil, err
		}
	}
	for _, e := range s.configSet {
		path := "session_config." + e.name
		if e.v == nil {
			if gjson.GetBytes(doc, path).Exists() {
				if doc, err = jsonedit.Remove(doc, path); err != nil {
					return nil, nil, err
				}
			}
			continue
		}
		if cfg := gjson.GetBytes(doc, "session_config"); cfg.Type == gjson.Null && cfg.Exists() {
			doc, err = jsonedit.Set(doc, "session_config", map[string]any{e.name: e.v})
		} else {
			doc, err = jsonedit.Set(doc, path, e.v)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if len(s.removed) > 0 {
		return s.applyRemovals()
	}
	if len(s.Tasks) < len(s.origTasks) {
		return nil, nil, fmt.Errorf("tasks cannot be removed by the harness")
	}
	for i := range s.origTasks {
		if !unchanged(&s.origTasks[i], &s.Tasks[i]) {
			touched = append(touched, i)
		}
	}
	if doc, err = s.editTasks(doc, touched); err != nil {
		return nil, nil, err
	}
	// The added tasks go in as one edit: one by one, an import of 10,000
	// tasks copied the growing file 10,000 times.
	var added []any
	for i := len(s.origTasks); i < len(s.Tasks); i++ {
		touched = append(touched, i)
		added = append(added, newTaskJSON(&s.Tasks[i]))
	}
	if arr := gjson.GetBytes(doc, "tasks"); len(added) > 1 && arr.IsArray() {
		doc, err = jsonedit.LayoutOf(doc).AppendAll(doc, "tasks", added)
		return doc, touched, err
	}
	for _, t := range added {
		if doc, err = jsonedit.Set(doc, "tasks.-1", t); err != nil {
			return nil, nil, err
		}
	}
	return doc, touched, nil
}

// readBack checks the edited text before it replaces the file: it is valid
// JSON, holds as many tasks as s, its session fields read as s has them, and
// every task the edit touched parses back to exactly the task in memory with
// an id no other task has. Tasks the edit did not touch kept their bytes, so
// they still read as they did; checking only the touched ones keeps a write
// to a 10,000-task state from paying for a second full parse.
func (s *State) readBack(edited []byte, touched []int) error {
	if !gjson.ValidBytes(edited) {
		return fmt.Errorf("the edit produced invalid JSON")
	}
	doc := gjson.Parse(shared(edited)) // edited becomes s.raw, never changed
	p := parser{path: Path(s.Dir)}
	// One pass over the top level, as Parse reads it (a Get per member
	// would scan past the task list each time).
	var tasks, count, last gjson.Result
	p.members(doc, "", "at the top level", []member{{"tasks", &tasks}, {"session_count", &count}, {"last_session", &last}})
	if p.err != nil {
		return p.err
	}
	if n := p.intAt(count, "session_count", 0); n != s.SessionCount {
		return fmt.Errorf("session_count reads back as %d, not %d", n, s.SessionCount)
	}
	if got := p.strAt(last, "last_session"); got != s.LastSession {
		return fmt.Errorf("last_session reads back as %q, not %q", got, s.LastSession)
	}
	if !tasks.IsArray() {
		return fmt.Errorf("tasks is no longer a list")
	}
	// The touched tasks are parsed back; the others are only counted.
	want := make(map[int]bool, len(touched))
	for _, i := range touched {
		want[i] = true
	}
	elems := make(map[int]gjson.Result, len(touched))
	n := 0
	tasks.ForEach(func(_, v gjson.Result) bool {
		if want[n] {
			elems[n] = v
		}
		n++
		return true
	})
	if n != len(s.Tasks) {
		return fmt.Errorf("the edit leaves %d tasks, not %d", n, len(s.Tasks))
	}
	var ids map[string]int
	for _, i := range touched {
		got := p.task(elems[i], i)
		if p.err != nil {
			return p.err
		}
		want := s.Tasks[i]
		if want.TimeoutSeconds == 0 && got.TimeoutSeconds == DefaultTimeoutSeconds {
			want.TimeoutSeconds = got.TimeoutSeconds // a new task's default, written out
		}
		if !unchanged(&got, &want) {
			return fmt.Errorf("tasks[%d] (%s) does not read back as written", i, want.ID)
		}
		if i >= len(s.origTasks) || got.ID != s.origTasks[i].ID {
			if ids == nil {
				ids = make(map[string]int, len(s.Tasks))
				for j := range s.Tasks {
					if prev, dup := ids[s.Tasks[j].ID]; dup {
						return fmt.Errorf("tasks[%d].id duplicates tasks[%d].id %q", j, prev, s.Tasks[j].ID)
					}
					ids[s.Tasks[j].ID] = j
				}
			}
		}
	}
	return nil
}

// setTop sets the top-level member name of doc, a number or a plain
// string (a count, a timestamp), to v. It finds the member with topValue,
// which reads from the end of the text where the harness writes these
// members, instead of scanning past the task list; a member it cannot
// find so (absent, or laid out otherwise) is set by jsonedit.
func setTop(doc []byte, name string, v any) ([]byte, error) {
	var text []byte
	switch v := v.(type) {
	case int:
		if v >= 0 {
			text = strconv.AppendInt(nil, int64(v), 10)
		}
	case string:
		if !strings.ContainsAny(v, "\"\\<>&") && utf8.ValidString(v) && !hasControl(v) {
			text = []byte(`"` + v + `"`)
		}
	}
	if text != nil {
		if i, j, ok := topValue(doc, name, true); ok {
			edited := make([]byte, 0, len(doc)+len(text)-(j-i))
			return append(append(append(edited, doc[:i]...), text...), doc[j:]...), nil
		}
	}
	return jsonedit.Set(doc, name, v)
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (t *Task) timeoutField() any {
	if t.TimeoutSeconds == 0 {
		return DefaultTimeoutSeconds
	}
	return t.TimeoutSeconds
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func checkpointsOrEmpty(c []Checkpoint) []Checkpoint {
	if c == nil {
		return []Checkpoint{}
	}
	return c
}

// editTask writes the fields of task i that differ between before and after.
// Lists that only grew get their new entries appended, so the existing ones
// keep their bytes.
// editTasks applies the changes of the touched tasks (indexes in s.Tasks,
// ascending) to doc. The task list is located once and each task is edited
// as its own piece of text, so a write that touches thousands of tasks (a
// dependency cycle marks every task on it) costs one pass over the file,
// not one per change.
func (s *State) editTasks(doc []byte, touched []int) ([]byte, error) {
	if len(touched) == 0 {
		return doc, nil
	}
	layout := jsonedit.LayoutOf(doc)
	elems := gjson.GetBytes(doc, "tasks").Array()
	out := make([]byte, 0, len(doc)+len(doc)/8)
	done := 0 // doc[:done] is in out
	for _, i := range touched {
		if i >= len(elems) {
			return nil, jsonedit.ErrLayout
		}
		e := elems[i]
		start, end := e.Index, e.Index+len(e.Raw)
		if start < done || end > len(doc) || string(doc[start:end]) != e.Raw {
			return nil, jsonedit.ErrLayout
		}
		// The piece starts with its line's indentation, so a member added
		// on a new line is indented as it would be in the whole file.
		indent := jsonedit.LineIndent(doc, start)
		piece := append([]byte(indent), e.Raw...)
		edited, err := editTask(piece, "", &s.origTasks[i], &s.Tasks[i], layout)
		if err != nil {
			return nil, err
		}
		out = append(out, doc[done:start]...)
		out = append(out, edited[len(indent):]...)
		done = end
	}
	return append(out, doc[done:]...), nil
}

// editTask applies the changes from before to after to the task at path
// base ("" when doc is the task itself, else "tasks.N.").
func editTask(doc []byte, base string, before, after *Task, layout jsonedit.Layout) ([]byte, error) {
	var err error
	set := layout.Set
	for i := range taskSchema {
		f := &taskSchema[i]
		switch f.name {
		case "validation.timeout_seconds":
			if before.TimeoutSeconds == after.TimeoutSeconds {
				continue
			}
		case "error_log":
			if grown(before.ErrorLog, after.ErrorLog) {
				for _, e := range after.ErrorLog[len(before.ErrorLog):] {
					if doc, err = set(doc, base+"error_log.-1", e); err != nil {
						return nil, err
					}
				}
				continue
			}
		case "checkpoints":
			if grown(before.Checkpoints, after.Checkpoints) {
				for _, c := range after.Checkpoints[len(before.Checkpoints):] {
					if doc, err = set(doc, base+"checkpoints.-1", c); err != nil {
						return nil, err
					}
				}
				continue
			}
		}
		if f.kind == kindTimeout {
			if before.timeoutField() == after.timeoutField() {
				continue // 0 is written as the default
			}
		} else if f.same(before, after) {
			continue
		}
		if doc, err = set(doc, base+f.name, f.value(after)); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// grown reports whether after is before with entries appended.
func grown[E comparable](before, after []E) bool {
	return len(after) > len(before) && slices.Equal(before, after[:len(before)])
}

// newTaskJSON builds the object written for a task the harness adds: every
// member of the schema in its order, the nested ones as their objects, the
// harness's extensions only once set.
func newTaskJSON(t *Task) any {
	m := newOrderedMap()
	for i := range taskSchema {
		f := &taskSchema[i]
		v := f.value(t)
		switch f.name {
		case "validation.command":
			m.set("validation", newOrderedMap().set("command", v).set("timeout_seconds", t.timeoutField()))
			continue
		case "validation.timeout_seconds":
			continue
		case "on_failure.cleanup":
			m.set("on_failure", newOrderedMap().set("cleanup", v))
			continue
		}
		if f.extension && (v == nil || f.kind == kindPaths && *f.list(t) == nil || f.kind == kindCount && *f.count(t) == 0) {
			continue // the harness's extensions appear only once used
		}
		m.set(f.name, v)
	}
	return m
}

// backup makes harness-tasks.json.bak a copy of what the harness has just
// written: its own file (a new inode, replaced by rename), never a second
// name of the live file, so an in-place write to one (an editor, a shell
// redirect, a torn write) can never reach the other; and the latest state,
// so a restore loses nothing the harness wrote. The live file was written
// and synced first: should a crash come between the two writes, the backup
// is one write behind and the live file is whole.
//
// The copy is renamed into place without its own fsync: it only ever
// matters when the live file, which was synced, is later broken by
// something else.
// writeEdited writes an edited tasks file the way every write does: the
// file itself (synced, renamed into place), its backup and the record.
func writeEdited(dir string, edited []byte) error {
	path := Path(dir)
	mode := fileMode(path)
	if err := atomicfile.WriteFile(path, edited, mode); err != nil {
		return failure.Wrap(failure.EnvSetup, err, "cannot write %s: %v", path, err)
	}
	if err := backup(dir, edited, mode); err != nil {
		return failure.Wrap(failure.EnvSetup, err, "cannot write %s: %v", BackupPath(dir), err)
	}
	record.Of(dir).SaveTasks(edited, root.Active(dir))
	return nil
}

func backup(dir string, doc []byte, mode os.FileMode) error {
	return atomicfile.Replace(BackupPath(dir), doc, mode)
}

// removeStaleTemps removes the temporary files earlier writes of the tasks
// file, its backup and the record's copy left when they were killed
// half-way: ".harness-tasks.json<random>", ".harness-tasks.json.bak<random>",
// ".harness-tasks.json.bak.<pid>", ".harness-tasks.json.corrupt-<time><random>"
// beside the file, ".harness-tasks.json.<pid>" in the record. Every writer
// runs it first, under the transaction lock, which every writer of those
// files holds, so none of them is in use; nothing else is touched.
func removeStaleTemps(dir string) {
	removeTemps(dir)
	if rd := record.Dir(dir); rd != "" {
		removeTemps(rd)
	}
}

func removeTemps(dir string) {
	names, err := safefile.Names(dir)
	if err != nil {
		return
	}
	for _, name := range names {
		if staleTemp(name) {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// staleTemp reports whether name is one of the temporary files a write of
// the tasks file (or its backup, corrupt copy or record copy) makes:
// ".harness-tasks.json", then ".bak", or ".corrupt-" and a time, or
// nothing, then an optional ".", then the digits of a random number or a
// pid.
func staleTemp(name string) bool {
	rest, ok := strings.CutPrefix(name, "."+FileName)
	if !ok {
		return false
	}
	if r, ok := strings.CutPrefix(rest, ".corrupt-"); ok {
		const stamp = len("20060102T150405Z")
		if len(r) <= stamp || r[stamp-1] != 'Z' || !digits(r[:8]) {
			return false
		}
		rest = r[stamp:]
	} else {
		rest = strings.TrimPrefix(rest, ".bak")
	}
	return digits(strings.TrimPrefix(rest, "."))
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// applyRemovals deletes the removed tasks' elements from the file text,
// last first so the earlier indexes stay valid; the other tasks keep their
// bytes.
func (s *State) applyRemovals() ([]byte, []int, error) {
	if s.SessionCount != s.origCount || s.LastSession != s.origLast || len(s.Tasks)+len(s.removed) != len(s.origTasks) {
		return nil, nil, fmt.Errorf("an update that removes tasks may change nothing else")
	}
	doc := s.raw
	var err error
	for k := len(s.removed) - 1; k >= 0; k-- {
		if doc, err = sjson.DeleteBytes(doc, fmt.Sprintf("tasks.%d", s.removed[k])); err != nil {
			return nil, nil, err
		}
	}
	return doc, nil, nil
}

// Restore writes data, the tasks file as the harness last wrote it, back in
// place of a changed or deleted one, with its backup and record, as a save
// does. The caller holds the transaction lock (internal/integrity does).
func Restore(dir string, data []byte) error {
	removeStaleTemps(dir)
	mode := fileMode(BackupPath(dir))
	if err := atomicfile.WriteFile(Path(dir), data, mode); err != nil {
		return failure.Wrap(failure.EnvSetup, err, "cannot restore %s: %v", Path(dir), err)
	}
	if err := backup(dir, data, mode); err != nil {
		return failure.Wrap(failure.EnvSetup, err, "cannot write %s: %v", BackupPath(dir), err)
	}
	record.Of(dir).SaveTasks(data, root.Active(dir))
	return nil
}
