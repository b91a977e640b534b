package plan

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/harness-agent/harness/internal/failure"
)

// File is one file of a plan kept as a directory of files (Backlog.md's
// task files): its path under the directory, with forward slashes, and
// its bytes.
type File struct {
	Name string
	Data []byte
}

// backlogConfig is what the reader takes of a Backlog.md directory's
// config.yml: its statuses, the last of which is the done one, the
// status a new task has, and the prefix a bare task number takes.
type backlogConfig struct {
	statuses []string
	initial  string
	prefix   string
}

// readBacklogConfig reads config.yml (nil: Backlog.md's defaults).
func readBacklogConfig(data []byte) backlogConfig {
	c := backlogConfig{statuses: []string{"To Do", "In Progress", "Done"}, prefix: "task"}
	var doc yaml.Node
	if len(data) > 0 && yaml.Unmarshal(data, &doc) == nil {
		top := mappingOf(&doc)
		if list := valueOf(top, "statuses"); list != nil && list.Kind == yaml.SequenceNode {
			var statuses []string
			for _, n := range list.Content {
				if s := strings.TrimSpace(scalarOf(n)); s != "" {
					statuses = append(statuses, s)
				}
			}
			if len(statuses) > 0 {
				c.statuses = statuses
			}
		}
		c.initial = strings.TrimSpace(scalarOf(valueOf(top, "default_status")))
		if p := strings.TrimSpace(scalarOf(valueOf(top, "task_prefix"))); p != "" {
			c.prefix = p
		}
	}
	if c.initial == "" {
		c.initial = c.statuses[0]
	}
	return c
}

// done is the status Backlog.md counts as done: the last of the list.
func (c backlogConfig) done() string { return c.statuses[len(c.statuses)-1] }

// working is the status of a task being worked on: the first that says
// "progress", else the status a new task has.
func (c backlogConfig) working() string {
	for _, s := range c.statuses {
		if strings.Contains(strings.ToLower(s), "progress") {
			return s
		}
	}
	return c.initial
}

// ParseBacklog reads the task files of a Backlog.md directory (dir as the
// person named it, for messages; config its config.yml, nil for none):
// each file's front matter is a task,
//
//	---
//	id: BACK-200
//	title: Add Claude Code integration
//	status: To Do
//	dependencies:
//	  - BACK-24.1
//	parent_task_id: BACK-12
//	priority: medium
//	---
//
// known by its id as backlog:ID. Done is the last of the config's
// statuses ("Done"), or a file under completed/; the body's Description
// section is its description, its Acceptance Criteria and Definition of
// Done items ("- [ ] #1 …") its acceptance criteria; a task waits on its
// dependencies, and a parent task on its subtasks.
func ParseBacklog(dir string, config []byte, files []File) (*Plan, error) {
	p, err := parseBacklog(dir, config, files)
	if err != nil {
		return nil, err
	}
	p.Format = Backlog
	p.openParts()
	return p, nil
}

// parseBacklog is ParseBacklog before a done task over open subtasks is
// made not done (parse does that for every format).
func parseBacklog(dir string, config []byte, files []File) (*Plan, error) {
	c := readBacklogConfig(config)
	p := &Plan{}
	byKey := map[string]string{}      // each task's source, by its id's key
	byNumber := map[string][]string{} // the tasks' sources, by their ids' numbers
	type link struct {
		from int    // the item
		dep  string // an id it names
		back bool   // a parent: it waits on the item, not the item on it
	}
	var links []link
	var odd []string // statuses not among the config's
	for fi, f := range files {
		name := path.Join(dir, f.Name)
		front, body, ok := frontMatter(f.Data)
		if !ok {
			// A readme beside the task files, as Backlog.md's own tasks/
			// has: Backlog.md reads only task files.
			p.Notes = append(p.Notes, fmt.Sprintf("%s: no front matter (`---` … `---` at the top): not a task file, left out", name))
			continue
		}
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(quoteHandles(front)), &doc); err != nil {
			return nil, bad(name, "front matter", "not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		top := mappingOf(&doc)
		id := strings.TrimSpace(scalarOf(valueOf(top, "id")))
		title := oneLine(scalarOf(valueOf(top, "title")))
		if id == "" || title == "" {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: its front matter has no `id:` or no `title:`: not a task file, left out", name))
			continue
		}
		it := Item{Source: Backlog + ":" + id, Title: title, Priority: "P1", DependsOn: []string{}, line: -1, file: fi}
		status := valueOf(top, "status")
		if status != nil {
			it.line, it.col = status.Line, status.Column-1
			if top.Style&yaml.FlowStyle != 0 {
				it.mark = "flow"
			}
		}
		word := strings.TrimSpace(scalarOf(status))
		it.Done = strings.EqualFold(word, c.done()) || strings.HasPrefix(f.Name, "completed/")
		if word != "" && !containsFold(c.statuses, word) {
			odd = append(odd, fmt.Sprintf("%s (%s)", it.Source, word))
		}
		if pr, ok := tagPriority(scalarOf(valueOf(top, "priority"))); ok {
			it.Priority = pr
		}
		it.Description = backlogSection(body, "Description")
		it.Acceptance = append(backlogChecklist(body, "Acceptance Criteria"), backlogChecklist(body, "Definition of Done")...)
		if deps := valueOf(top, "dependencies"); deps != nil {
			if deps.Kind == yaml.ScalarNode {
				deps = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{deps}}
			}
			for _, d := range deps.Content {
				if dep := strings.TrimSpace(scalarOf(d)); dep != "" {
					links = append(links, link{from: len(p.Items), dep: dep})
				}
			}
		}
		if parent := strings.TrimSpace(scalarOf(valueOf(top, "parent_task_id"))); parent != "" {
			links = append(links, link{from: len(p.Items), dep: parent, back: true})
		}
		if n := backlogNumber(id); n != "" {
			byNumber[n] = append(byNumber[n], it.Source)
		}
		if k := backlogKey(id, c.prefix); byKey[k] != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: the id %s is another task file's too: each is imported, the second as %s~2", name, id, it.Source))
		} else {
			byKey[k] = it.Source
		}
		p.Items = append(p.Items, it)
	}
	uniqueSources(p.Items)
	at := map[string]int{}
	for i, it := range p.Items {
		at[it.Source] = i
	}
	var prefixed []string // dependencies taken by their number
	for _, l := range links {
		src, ok := byKey[backlogKey(l.dep, c.prefix)]
		if same := byNumber[backlogNumber(l.dep)]; !ok && len(same) == 1 {
			// "task-3" where the tasks are BACK-N: a project that set its
			// task_prefix after its first tasks keeps their dependencies
			// under the old prefix. One task has the number: that one.
			src, ok = same[0], true
			prefixed = append(prefixed, fmt.Sprintf("%s as %s", l.dep, strings.TrimPrefix(src, Backlog+":")))
		}
		if !ok {
			src = Backlog + ":" + l.dep // not in the directory: the import says so
		}
		it := &p.Items[l.from]
		if l.back {
			if j, ok := at[src]; ok && j != l.from {
				parent := &p.Items[j]
				parent.DependsOn = append(parent.DependsOn, it.Source)
				parent.parts = append(parent.parts, it.Source)
			}
			continue
		}
		if src != it.Source && !containsFold(it.DependsOn, src) {
			it.DependsOn = append(it.DependsOn, src)
		}
	}
	if len(prefixed) > 0 {
		shown := prefixed[:min(len(prefixed), 5)]
		more := ""
		if len(prefixed) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(prefixed)-len(shown))
		}
		p.Notes = append(p.Notes, fmt.Sprintf("%s: %d dependencies name an id no task has under another prefix, taken as the one task of their number: %s%s",
			dir, len(prefixed), strings.Join(shown, ", "), more))
	}
	if len(odd) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: task(s) of a status not among the config's statuses (%s) are imported as not done: %s",
			dir, strings.Join(c.statuses, ", "), strings.Join(odd, ", ")))
	}
	return p, nil
}

// PatchBacklog writes the harness's verdict on each task of a Backlog.md
// directory into its file's status (the config's last status for done,
// its first that says "progress" while worked on, else the status a new
// task has), and gives back the files it changed, and a note for each
// task it could not change in place (left as the file has it).
func PatchBacklog(dir string, config []byte, files []File, verdict func(source string) Verdict) ([]File, []Change, []string, error) {
	p, err := ParseBacklog(dir, config, files)
	if err != nil {
		return nil, nil, nil, err
	}
	var notes []string
	c := readBacklogConfig(config)
	lines := map[int][]string{} // the lines of each file changed
	var changes []Change
	for _, it := range p.Items {
		v := verdict(it.Source)
		done, change := it.change(v)
		status := c.initial
		switch {
		case !change:
			continue
		case done:
			status = c.done()
		case v == InProgress:
			status = c.working()
		}
		name := path.Join(dir, files[it.file].Name)
		if it.line < 0 {
			notes = append(notes, fmt.Sprintf("%s: %s has no `status:` line to change: left as it is", name, it.Source))
			continue
		}
		if strings.HasPrefix(files[it.file].Name, "completed/") && status != c.done() {
			notes = append(notes, fmt.Sprintf("%s: %s is not moved back to not done: Backlog.md keeps it done under completed/ whatever its status says (move the file to tasks/ to reopen it there)", name, it.Source))
			continue
		}
		l, ok := lines[it.file]
		if !ok {
			l = strings.SplitAfter(string(files[it.file].Data), "\n")
			lines[it.file] = l
		}
		if err := setStatusLine(l, it, status, nil); err != nil {
			notes = append(notes, fmt.Sprintf("%s: %s cannot be changed in place (%v): left as it is", name, it.Source, err))
			continue
		}
		changes = append(changes, Change{Source: it.Source, Done: status == c.done()})
	}
	var changed []File
	after := slices.Clone(files)
	for i, f := range files {
		if l, ok := lines[i]; ok {
			after[i].Data = []byte(strings.Join(l, ""))
			changed = append(changed, File{Name: f.Name, Data: after[i].Data})
		}
	}
	// Read back, as Patch does: a status the edit could not reach whole
	// is said, not written wrong.
	q, err := parseBacklog(dir, config, after)
	if err != nil {
		return nil, nil, nil, failure.Wrap(failure.Config, err, "%s: the export's edit would leave files that do not read: %v", dir, err)
	}
	if err := q.reads(dir, changes); err != nil {
		return nil, nil, nil, err
	}
	return changed, changes, notes, nil
}

// isBacklogTask reports whether data is one task file of Backlog.md: front
// matter with an id, a title and a status, and no to-dos.
func isBacklogTask(data []byte) bool {
	front, _, ok := frontMatter(data)
	if !ok || strings.Contains(front, "todos:") {
		return false
	}
	var doc yaml.Node
	if yaml.Unmarshal([]byte(quoteHandles(front)), &doc) != nil {
		return false
	}
	top := mappingOf(&doc)
	return scalarOf(valueOf(top, "id")) != "" && scalarOf(valueOf(top, "title")) != "" && valueOf(top, "status") != nil
}

// backlogKey is the identity of a task id as Backlog.md compares them:
// case aside, a bare number takes the config's prefix, and the numbers
// of "BACK-007.1" lose their leading zeros.
func backlogKey(id, prefix string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	if m := backlogID().FindStringSubmatch(id); m != nil {
		pre := m[1]
		if pre == "" {
			pre = strings.ToLower(prefix)
		}
		parts := strings.Split(m[2], ".")
		for i, n := range parts {
			if parts[i] = strings.TrimLeft(n, "0"); parts[i] == "" {
				parts[i] = "0"
			}
		}
		return pre + "-" + strings.Join(parts, ".")
	}
	return id
}

// backlogNumber is the number of a task id ("3.1" of "BACK-003.1"), ""
// when it has none.
func backlogNumber(id string) string {
	k := backlogKey(id, "")
	if i := strings.LastIndexByte(k, '-'); i >= 0 && backlogID().MatchString(k) {
		return k[i+1:]
	}
	return ""
}

var backlogID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:([a-z][a-z0-9_]*)-)?(\d+(?:\.\d+)*)$`) })

// quoteHandles quotes an `assignee: @name` or `reporter: @name` value,
// which YAML reserves the @ of, as Backlog.md's own reader does; a line's
// other text, and so every line's number and the status's column, stay.
func quoteHandles(front string) string {
	lines := strings.SplitAfter(front, "\n")
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		for _, key := range []string{"assignee:", "reporter:"} {
			if rest, ok := strings.CutPrefix(t, key); ok {
				if v := strings.TrimSpace(rest); strings.HasPrefix(v, "@") {
					lines[i] = l[:len(l)-len(t)] + key + ` ""` + l[len(strings.TrimRight(l, "\r\n")):]
				}
			}
		}
	}
	return strings.Join(lines, "")
}

// backlogSection is the text of the body's "## NAME" section, without
// Backlog.md's markers ("<!-- SECTION:DESCRIPTION:BEGIN -->").
func backlogSection(body, name string) string {
	var out []string
	in := false
	for _, l := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "## ") {
			in = strings.EqualFold(strings.TrimSpace(t[3:]), name)
			continue
		}
		if in && !(strings.HasPrefix(t, "<!--") && strings.HasSuffix(t, "-->")) {
			out = append(out, strings.TrimRight(l, " \t"))
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// backlogChecklist is the items of the body's "## NAME" section's
// checklist ("- [ ] #1 text"), each its text.
func backlogChecklist(body, name string) []string {
	var out []string
	for _, l := range strings.Split(backlogSection(body, name), "\n") {
		c := checkbox(l)
		if c == nil {
			continue
		}
		text := c.text
		if n, rest, ok := strings.Cut(text, " "); ok && strings.HasPrefix(n, "#") && strings.Trim(n[1:], "0123456789") == "" {
			text = rest
		}
		out = append(out, strings.TrimSpace(text))
	}
	return out
}

// containsFold reports whether list holds s, case aside.
func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
