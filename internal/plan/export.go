package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/jsonedit"
	"github.com/harness-agent/harness/internal/state"
)

// Verdict is what the harness holds of an item's task, for an export.
type Verdict int

const (
	// Leave the item as the file has it: no task, or one the harness
	// has not taken up.
	Leave Verdict = iota
	// Done: completed by the harness's own validation.
	Done
	// Pending: taken up by the harness and not completed (failed, or
	// reopened after it was done): an item the file has done goes back.
	Pending
	// InProgress: as Pending, the harness working on it now.
	InProgress
)

// Change is one item an export changed.
type Change struct {
	Source string
	Done   bool // marked done; else moved back to not done
}

// Patch writes, in data (the file called name, of format), the harness's
// verdict on each item: done where the harness completed it and the file
// does not have it done (passes true, status "done" or "closed", state
// "CLOSED", "[x]"); not done where the file has it done and the harness
// took it up again (it failed, or was reopened). It changes nothing else,
// so a file with nothing to change comes back byte for byte, in its own
// encoding.
func Patch(format, name string, stored []byte, verdict func(source string) Verdict) ([]byte, []Change, error) {
	data, enc := decode(stored)
	p, err := parse(format, name, data, nil)
	if err != nil {
		return nil, nil, err
	}
	var changes []Change
	out := data
	// The file's lines with their endings, for the line formats.
	lineOf := strings.SplitAfter(string(data), "\n")
	byLine := false
	shifted := map[int]int{} // how far a line's earlier edits moved what follows them
	for _, it := range p.Items {
		v := verdict(it.Source)
		done, change := it.change(v)
		if !change {
			continue
		}
		word := func(yes, no, working string) string {
			switch {
			case done:
				return yes
			case v == InProgress && working != "":
				return working
			}
			return no
		}
		// set writes key's value in the item's object: in the file, or on
		// its own line of a file of one object a line.
		set := func(key string, value any) {
			if !it.inLine {
				out, err = jsonedit.Set(out, member(it.at, key), value)
				return
			}
			l := lineOf[it.line]
			body := strings.TrimRight(l, "\r\n")
			var edited []byte
			edited, err = jsonedit.Set([]byte(body), key, value)
			lineOf[it.line] = string(edited) + l[len(body):]
			byLine = true
		}
		switch format {
		case FeatureList:
			if it.mark != "" {
				set(it.mark, word("done", "pending", "in_progress"))
			} else {
				set("passes", done)
			}
		case Taskmaster:
			set("status", word("done", "pending", "in-progress"))
		case GitHub:
			state := word("CLOSED", "OPEN", "")
			if it.mark == "lower" {
				state = strings.ToLower(state)
			}
			set("state", state)
		case Beads:
			set("status", word("closed", "open", "in_progress"))
		case Cursor:
			err = setStatusLine(lineOf, it, word("completed", "pending", "in_progress"), shifted)
			byLine = true
		case Backlog:
			// One task file (a directory whole: PatchBacklog).
			c := readBacklogConfig(nil)
			err = setStatusLine(lineOf, it, word(c.done(), c.initial, c.working()), shifted)
			byLine = true
		case Markdown:
			l := lineOf[it.line]
			m := boxLine().FindStringSubmatchIndex(strings.TrimRight(l, "\r\n"))
			lineOf[it.line] = l[:m[4]] + word("x", " ", "") + l[m[5]:]
			byLine = true
		}
		if err != nil {
			return nil, nil, failure.Wrap(failure.Config, err, "%s: cannot change %s in place: %v", name, it.Source, err)
		}
		changes = append(changes, Change{Source: it.Source, Done: done})
	}
	if len(changes) == 0 {
		return stored, nil, nil
	}
	if byLine {
		out = []byte(strings.Join(lineOf, ""))
	}
	if format == Cursor || format == Backlog {
		// A YAML status edited on its line: read back, so that one the
		// edit could not reach whole (a value over two lines) is said, not
		// written wrong.
		q, err := parse(format, name, out, nil)
		if err != nil {
			return nil, nil, failure.Wrap(failure.Config, err, "%s: the export's edit would leave a file that does not read: %v", name, err)
		}
		if err := q.reads(name, changes); err != nil {
			return nil, nil, err
		}
	}
	return enc.encode(out), changes, nil
}

// reads reports an error unless p, a plan as an export's edit left it,
// says of each changed item what the change made of it.
func (p *Plan) reads(name string, changes []Change) error {
	done := map[string]bool{}
	for _, it := range p.Items {
		done[it.Source] = it.Done
	}
	for _, c := range changes {
		if d, ok := done[c.Source]; !ok || d != c.Done {
			return failure.New(failure.Config, "%s: cannot change %s in place: its status does not read as written (a value over several lines?); set it by hand", name, c.Source)
		}
	}
	return nil
}

// change is what an export makes of the item for its task's verdict v:
// done where the harness completed the task and the file does not say so;
// back to not done where the file says done (what the file says, which
// the plan read may not: an epic closed over open children, a subtask open
// under a done task) and the harness took the task up again; nothing
// (change false) otherwise.
func (it Item) change(v Verdict) (done, change bool) {
	inFile := it.Done && !it.fileOpen || it.fileDone
	switch {
	case v == Done && !inFile:
		return true, true
	case (v == Pending || v == InProgress) && inFile:
		return false, true
	}
	return false, false
}

// member is the gjson path of key in the object at at ("" for the whole
// file: `gh issue view --json`, one Beads issue pretty-printed).
func member(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

// Write renders tasks as a new file of format, for a person whose plan is
// in the harness only. Completed is done, in progress is in progress,
// anything else is still to do.
func Write(format string, tasks []state.Task) ([]byte, error) {
	switch format {
	case FeatureList:
		list := []map[string]any{}
		for _, t := range tasks {
			category, desc := featureOf(t)
			list = append(list, ordered("category", category, "description", desc,
				"steps", orEmpty(t.Acceptance), "passes", t.Status == state.Completed))
		}
		return indent(list)
	case Taskmaster:
		num := map[string]int{}
		for i, t := range tasks {
			num[t.ID] = i + 1
		}
		list := []map[string]any{}
		for i, t := range tasks {
			deps := []int{}
			for _, d := range t.DependsOn {
				if n, ok := num[d]; ok {
					deps = append(deps, n)
				}
			}
			status := map[string]string{state.Completed: "done", state.InProgress: "in-progress"}[t.Status]
			if status == "" {
				status = "pending"
			}
			list = append(list, ordered("id", i+1, "title", t.Title, "description", t.Description, "details", "",
				"testStrategy", strings.Join(t.Acceptance, "\n"), "status", status, "dependencies", deps,
				"priority", map[string]string{"P0": "high", "P2": "low"}[t.Priority]+orMedium(t.Priority), "subtasks", []any{}))
		}
		return indent(map[string]any{"master": ordered("tasks", list, "metadata", ordered("description", "exported from harness-tasks.json"))})
	case Beads:
		var b bytes.Buffer
		for _, t := range tasks {
			deps := []map[string]any{}
			for _, d := range t.DependsOn {
				deps = append(deps, ordered("issue_id", t.ID, "depends_on_id", d, "type", "blocks"))
			}
			status := map[string]string{state.Completed: "closed", state.InProgress: "in_progress"}[t.Status]
			if status == "" {
				status = "open"
			}
			prio := map[string]int{"P0": 1, "P1": 2, "P2": 3}[t.Priority]
			if prio == 0 {
				prio = 2
			}
			line, err := marshal(ordered("id", t.ID, "title", t.Title, "description", t.Description,
				"acceptance_criteria", strings.Join(t.Acceptance, "\n"), "status", status, "priority", prio,
				"issue_type", "task", "dependencies", deps))
			if err != nil {
				return nil, err
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		return b.Bytes(), nil
	case Markdown:
		return writeMarkdown(tasks), nil
	case Cursor:
		return writeCursor(tasks)
	case Backlog:
		return nil, failure.New(failure.Usage, "an export to backlog marks the task files of a Backlog.md directory: it needs that directory").
			WithHint("harness export --from backlog")
	case GitHub:
		return nil, failure.New(failure.Usage, "an export to github marks the issues of the file `gh issue list` wrote: it needs that file").
			WithHint("harness export --format github --from ISSUES.json")
	}
	return nil, failure.New(failure.Usage, "unknown plan format %q", format).WithHint("--format takes %s", strings.Join(Formats, "|"))
}

// featureOf is the category and description of task t as a feature: an
// import from a feature list keeps them in its description ("category:
// functional" after the description when that is longer than the title).
func featureOf(t state.Task) (category, description string) {
	category, description = "harness", t.Title
	rest := t.Description
	if i := strings.LastIndex(rest, "category: "); i >= 0 && (i == 0 || strings.HasSuffix(rest[:i], "\n\n")) && !strings.Contains(rest[i:], "\n") {
		category = strings.TrimPrefix(rest[i:], "category: ")
		rest = strings.TrimSpace(rest[:i])
	}
	if rest != "" && strings.Join(strings.Fields(rest), " ") == t.Title {
		description = rest
	}
	return category, description
}

// writeMarkdown writes tasks as a checklist. A task waited on by an
// earlier one is nested under it, as an import of a checklist reads
// nesting (the outer item waits on the items under it); any other
// dependency has no place in a checklist. A description is a block quote
// under its item's criteria, after a blank line: quoted, none of its lines
// reads as a task, a criterion, a dependency or a fence when the checklist
// is imported again, and its blank lines stay.
func writeMarkdown(tasks []state.Task) []byte {
	at := map[string]int{}
	for i, t := range tasks {
		at[t.ID] = i
	}
	under := make([][]int, len(tasks))
	placed := make([]bool, len(tasks))
	for i, t := range tasks {
		for _, d := range t.DependsOn {
			if j, ok := at[d]; ok && j > i && !placed[j] {
				under[i] = append(under[i], j)
				placed[j] = true
			}
		}
	}
	var b strings.Builder
	var write func(i int, indent string)
	write = func(i int, indent string) {
		t := tasks[i]
		mark := " "
		if t.Status == state.Completed {
			mark = "x"
		}
		fmt.Fprintf(&b, "%s- [%s] %s\n", indent, mark, t.Title)
		for _, a := range t.Acceptance {
			fmt.Fprintf(&b, "%s  - %s\n", indent, a)
		}
		if d := strings.TrimSpace(t.Description); d != "" {
			b.WriteString("\n")
			for _, line := range strings.Split(d, "\n") {
				if line = strings.TrimRight(line, " \t\r"); line == "" {
					fmt.Fprintf(&b, "%s  >\n", indent)
				} else {
					fmt.Fprintf(&b, "%s  > %s\n", indent, line)
				}
			}
			b.WriteString("\n")
		}
		for _, j := range under[i] {
			write(j, indent+"  ")
		}
	}
	for i := range tasks {
		if !placed[i] {
			write(i, "")
		}
	}
	return []byte(b.String())
}

func orMedium(p string) string {
	if p == "P0" || p == "P2" {
		return ""
	}
	return "medium"
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ordered builds an object from key, value pairs.
func ordered(kv ...any) map[string]any {
	m := map[string]any{}
	var keys []string
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		keys = append(keys, k)
		m[k] = kv[i+1]
	}
	m[orderKey] = keys
	return m
}

// orderKey holds an ordered object's key order; it is never written.
const orderKey = "\x00order"

// marshal writes v compactly, the objects made by ordered in their order.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := write(&b, v, "", ""); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// indent writes v with two spaces of indentation and a final newline.
func indent(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := write(&b, v, "\n", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func write(b *bytes.Buffer, v any, nl, unit string) error {
	sep := ":"
	if nl != "" {
		sep = ": "
	}
	switch x := v.(type) {
	case map[string]any:
		keys, _ := x[orderKey].([]string)
		if keys == nil {
			for k := range x {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(nl + unit)
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteString(sep)
			if err := write(b, x[k], nl+unit, unit); err != nil {
				return err
			}
		}
		b.WriteString(nl + "}")
	case []string: // written one a line, as JSON.stringify(v, null, 2) does
		items := make([]any, len(x))
		for i := range x {
			items[i] = x[i]
		}
		return write(b, items, nl, unit)
	case []map[string]any:
		items := make([]any, len(x))
		for i := range x {
			items[i] = x[i]
		}
		return write(b, items, nl, unit)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(nl + unit)
			if err := write(b, e, nl+unit, unit); err != nil {
				return err
			}
		}
		b.WriteString(nl + "]")
	default:
		enc, err := marshalPlain(v)
		if err != nil {
			return err
		}
		b.Write(enc)
	}
	return nil
}

// marshalPlain writes a scalar or a list of scalars without escaping
// HTML characters (a title "a < b" stays readable).
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
