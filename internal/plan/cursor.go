package plan

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/harness-agent/harness/internal/state"
)

// parseCursor reads a plan of Cursor's plan mode (.cursor/plans/*.plan.md):
// Markdown whose YAML front matter holds the plan's to-dos,
//
//	todos:
//	  - id: selenium-setup
//	    content: Add Selenium WebDriver config and page objects
//	    status: pending            # in_progress, completed, cancelled
//	    dependencies:
//	      - build-web-target
//
// Each to-do is a task, known by its id; completed is done, cancelled is
// skipped. The body, the plan's own text, is not read: each task's
// description names the plan and its file, for the agent to read it whole.
func parseCursor(name string, data []byte) (*Plan, error) {
	front, _, ok := frontMatter(data)
	if !ok {
		return nil, bad(name, "", "no front matter (`---` … `---` at the top) holding the plan's `todos:`")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		return nil, bad(name, "front matter", "not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	top := mappingOf(&doc)
	todos := valueOf(top, "todos")
	if top == nil || todos == nil || todos.Kind != yaml.SequenceNode {
		return nil, bad(name, "front matter", "no `todos:` list (Cursor's plan mode writes one)")
	}
	if len(todos.Content) == 0 {
		return nil, bad(name, "front matter", "`todos:` is empty: the plan has no to-dos to import yet (Cursor writes them as it plans)")
	}
	p := &Plan{}
	intro := "Part of the plan " + filepath.Base(name)
	if title := scalarOf(valueOf(top, "name")); title != "" {
		intro = fmt.Sprintf("Part of the plan %q (%s)", oneLine(title), filepath.Base(name))
	}
	description := intro + ", whose text says how."
	if overview := strings.TrimSpace(scalarOf(valueOf(top, "overview"))); overview != "" {
		description += "\n\n" + overview
	}
	var odd []string // statuses this reader does not know
	for i, node := range todos.Content {
		where := fmt.Sprintf("todos[%d]", i)
		if node.Kind != yaml.MappingNode {
			return nil, bad(name, where, "a to-do must be a mapping (`- id: …` and `content: …`), got %s", kindName(node))
		}
		content := strings.TrimSpace(scalarOf(valueOf(node, "content")))
		id := scalarOf(valueOf(node, "id"))
		switch {
		case content == "" && id == "":
			p.Notes = append(p.Notes, fmt.Sprintf("%s: %s has neither `content:` nor `id:`: left out", name, where))
			continue
		case content == "":
			content = id // a to-do known by its id alone ("t1-attempt-runtime-binding")
		case id == "":
			id = shortHash(content)
		}
		it := Item{Source: Cursor + ":" + id, Title: oneLine(content), Description: description, Priority: "P1",
			DependsOn: []string{}, line: -1}
		// Where an export writes the to-do's status: its line in the file
		// and its column there; for a to-do without one, a line of its
		// own after the first key's, where that key's value ends on its
		// line ("insert").
		status := valueOf(node, "status")
		if key, value := node.Content[0], node.Content[1]; status != nil {
			it.line, it.col = status.Line, status.Column-1
			if node.Style&yaml.FlowStyle != 0 {
				it.mark = "flow" // `{id: a, status: pending}`: a comma ends the status
			}
		} else if node.Style&yaml.FlowStyle == 0 && value.Line == key.Line && value.Kind == yaml.ScalarNode &&
			value.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
			it.line, it.col, it.mark = key.Line, key.Column-1, "insert"
		}
		switch word := strings.ToLower(scalarOf(status)); word {
		case "completed", "complete", "done":
			it.Done = true
		case "cancelled", "canceled":
			p.Skipped = append(p.Skipped, Skipped{Source: it.Source, Title: it.Title, Why: "cancelled in the plan"})
			continue
		case "", "pending", "in_progress", "todo":
		default:
			odd = append(odd, fmt.Sprintf("%s (%s)", it.Source, word))
		}
		deps := valueOf(node, "dependencies")
		if deps == nil {
			deps = valueOf(node, "depends_on") // as plans written by hand in Cursor's format name it
		}
		if deps != nil && deps.Kind == yaml.ScalarNode && deps.Tag != "!!null" {
			deps = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{deps}} // one id, not in a list
		}
		if deps != nil && deps.Kind == yaml.SequenceNode {
			for _, d := range deps.Content {
				if dep := scalarOf(d); dep != "" && dep != id {
					it.DependsOn = append(it.DependsOn, Cursor+":"+dep)
				}
			}
		}
		p.Items = append(p.Items, it)
	}
	if len(odd) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: to-dos of a status this reader does not know are imported as not done: %s", name, strings.Join(odd, ", ")))
	}
	uniqueSources(p.Items) // two to-dos of one id: the second is ID~2
	return p, nil
}

// frontMatter is the YAML between a file's first line "---" and the next
// "---" (or "..."), and the text after that line; ok is false when the
// file does not begin so. The YAML begins on the file's second line, so a
// node's 1-based Line in it is the node's 0-based line in the file.
func frontMatter(data []byte) (front, body string, ok bool) {
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) < 2 || strings.TrimRight(lines[0], " \t\r\n") != "---" {
		return "", "", false
	}
	for i := 1; i < len(lines); i++ {
		if t := strings.TrimRight(lines[i], " \t\r\n"); t == "---" || t == "..." {
			return strings.Join(lines[1:i], ""), strings.Join(lines[i+1:], ""), true
		}
	}
	return "", "", false
}

// isCursorPlan reports whether data is a Markdown file whose front matter
// holds a list of to-dos, as Cursor's plan mode writes them.
func isCursorPlan(data []byte) bool {
	front, body, ok := frontMatter(data)
	if !ok || !strings.Contains(front, "todos:") {
		return false
	}
	var doc yaml.Node
	if yaml.Unmarshal([]byte(front), &doc) != nil {
		return false
	}
	todos := valueOf(mappingOf(&doc), "todos")
	if todos == nil || todos.Kind != yaml.SequenceNode {
		return false
	}
	if len(todos.Content) == 0 {
		// A plan not built yet (`todos: []`): Cursor's, unless its body
		// is a checklist to read.
		for _, l := range lines([]byte(body)) {
			if checkbox(l) != nil {
				return false
			}
		}
		return true
	}
	first := todos.Content[0]
	return valueOf(first, "content") != nil || valueOf(first, "id") != nil
}

// mappingOf is the mapping a YAML document holds, nil when it holds none.
func mappingOf(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		return doc.Content[0]
	}
	return nil
}

// valueOf is the value of key in the mapping m, nil when m is no mapping
// or has no such key.
func valueOf(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// scalarOf is the text of a scalar ("" for none, null, or anything else).
func scalarOf(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// kindName names what a YAML node is, for a message.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	}
	return strconv.Quote(n.Value)
}

// setStatusLine writes status as the YAML status of it (a Cursor to-do, a
// Backlog.md task) in lineOf, its file's lines with their endings: in
// place of the status it has, or on a line of its own after its first
// key's. shifted keeps how far each line's edits moved what follows them
// on it (to-dos written on one line: `[{…}, {…}]`); nil for a file of one
// item.
func setStatusLine(lineOf []string, it Item, status string, shifted map[int]int) error {
	if it.line < 0 {
		return fmt.Errorf("it has no `status:` to change")
	}
	l := lineOf[it.line]
	body := strings.TrimRight(l, "\r\n")
	if it.mark == "insert" { // never the file's last line: the front matter's end follows
		lineOf[it.line] = l + strings.Repeat(" ", it.col) + "status: " + status + l[len(body):]
		return nil
	}
	edited, err := setStatusValue(body, it.col+shifted[it.line], status, it.mark == "flow")
	if err != nil {
		return err
	}
	lineOf[it.line] = edited + l[len(body):]
	if shifted != nil {
		shifted[it.line] += len(edited) - len(body)
	}
	return nil
}

// setStatusValue writes status as the value at column col of line (its
// ending excluded), where a to-do's or a task's status is: a plain or
// quoted scalar, up to a comment (in a flow mapping, up to a comma or a
// bracket).
func setStatusValue(line string, col int, status string, flow bool) (string, error) {
	if col < 0 || col > len(line) {
		return "", fmt.Errorf("no status at column %d", col+1)
	}
	rest := line[col:]
	if value := strings.TrimLeft(rest, " \t"); value == "" || value[0] == '#' {
		// `status:` with no value (a comment after it, or nothing)
		sep := ""
		if col > 0 && line[col-1] == ':' {
			sep = " "
		}
		if value != "" {
			value = " " + value
		}
		return line[:col] + sep + status + value, nil
	}
	end := len(rest)
	switch rest[0] {
	case '"', '\'':
		end = strings.IndexByte(rest[1:], rest[0]) + 2
		if end < 2 {
			return "", fmt.Errorf("the status's quote does not end on its line")
		}
	default:
		if i := strings.Index(rest, " #"); i >= 0 {
			end = i
		}
		if i := strings.IndexAny(rest[:end], ",}]"); flow && i >= 0 {
			end = i
		}
		end = len(strings.TrimRight(rest[:end], " \t"))
	}
	return line[:col] + status + rest[end:], nil
}

// writeCursor writes tasks as a plan of Cursor's plan mode: the to-dos in
// the front matter (each known by its task's id, with its status and the
// tasks it waits on), and a body listing them, as Cursor's plans have one.
func writeCursor(tasks []state.Task) ([]byte, error) {
	type todo struct {
		ID           string   `yaml:"id"`
		Content      string   `yaml:"content"`
		Status       string   `yaml:"status"`
		Dependencies []string `yaml:"dependencies,omitempty"`
	}
	front := struct {
		Name      string `yaml:"name"`
		Overview  string `yaml:"overview"`
		Todos     []todo `yaml:"todos"`
		IsProject bool   `yaml:"isProject"`
	}{Name: "harness tasks", Overview: "Exported from harness-tasks.json.", Todos: []todo{}}
	var body strings.Builder
	body.WriteString("\n# harness tasks\n\n")
	for _, t := range tasks {
		status := map[string]string{state.Completed: "completed", state.InProgress: "in_progress"}[t.Status]
		if status == "" {
			status = "pending"
		}
		front.Todos = append(front.Todos, todo{ID: t.ID, Content: t.Title, Status: status, Dependencies: t.DependsOn})
		fmt.Fprintf(&body, "- `%s` %s\n", t.ID, t.Title)
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(front); err != nil {
		return nil, err
	}
	return []byte("---\n" + b.String() + "---\n" + body.String()), nil
}
