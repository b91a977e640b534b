package plan

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/failure"
)

// parseFeatureList reads Anthropic's feature_list.json: a list of
// {category, description, steps[], passes}, or the same list wrapped in an
// object ({"features": [...]}, as most files of that name in the wild
// are). A feature has no id, so its Source is the hash of its description
// (the pattern's rule is that features are never edited; an edited one is
// a new feature); a feature with a name and no description is known by its
// name. Its steps are its acceptance criteria; it has no priority (the
// list's order is kept by the tasks' ids) and no dependencies.
func parseFeatureList(name string, data []byte) (*Plan, error) {
	doc, err := jsonDoc(name, data)
	if err != nil {
		return nil, err
	}
	list, prefix := doc, ""
	if doc.IsObject() && doc.Get("features").IsArray() {
		list, prefix = doc.Get("features"), "features."
	}
	if !list.IsArray() {
		return nil, bad(name, "", "a feature list is a JSON list of features (or an object with one as \"features\"), got %s", kindOf(doc))
	}
	r := &reader{name: name}
	p := &Plan{}
	for i, f := range list.Array() {
		where := fmt.Sprintf("%s[%d]", strings.TrimSuffix(prefix, "."), i)
		if !f.IsObject() {
			return nil, bad(name, where, "a feature must be an object, got %s", kindOf(f))
		}
		desc := strings.TrimSpace(r.str(f.Get("description"), where+".description"))
		var title string
		for _, k := range []string{"title", "name", "feature"} {
			if title == "" {
				title = strings.TrimSpace(r.str(f.Get(k), where+"."+k))
			}
		}
		category := r.str(f.Get("category"), where+".category")
		var steps []string
		for _, k := range []string{"steps", "acceptance", "acceptance_criteria", "acceptanceCriteria"} {
			steps = append(steps, textList(f.Get(k))...)
		}
		status := r.str(f.Get("status"), where+".status")
		passes := f.Get("passes")
		if passes.Type == gjson.String && (passes.Str == "true" || passes.Str == "false") {
			passes = gjson.Result{Type: map[bool]gjson.Type{true: gjson.True, false: gjson.False}[passes.Str == "true"], Raw: passes.Str}
		}
		if r.err == nil && passes.Exists() && !passes.IsBool() {
			r.err = bad(name, where+".passes", "must be true or false, got %s", passes.Raw)
		}
		if r.err != nil {
			return nil, r.err
		}
		if desc == "" && title == "" {
			return nil, bad(name, where+".description", "is missing or empty (it is the feature's title)")
		}
		it := Item{Source: FeatureList + ":" + shortHash(desc), Acceptance: steps, Priority: "P1",
			Done: passes.Bool() || !passes.Exists() && featureDone[strings.ToLower(status)], DependsOn: []string{}, at: prefix + fmt.Sprint(i)}
		// A feature with an id of its own is known by it: its text may change.
		if id := f.Get("id"); id.Type == gjson.String && strings.TrimSpace(id.Str) != "" || id.Type == gjson.Number {
			it.Source = FeatureList + ":" + strings.TrimSpace(id.String())
		} else if desc == "" {
			it.Source = FeatureList + ":" + shortHash(title)
		}
		if !passes.Exists() && status != "" {
			it.mark = "status"
		}
		// Features with ids of their own may name the ones they wait on.
		for _, k := range []string{"dependencies", "depends_on", "dependsOn"} {
			for _, d := range f.Get(k).Array() {
				if d.Type == gjson.String && strings.TrimSpace(d.Str) != "" || d.Type == gjson.Number {
					it.DependsOn = append(it.DependsOn, FeatureList+":"+strings.TrimSpace(d.String()))
				}
			}
		}
		if pr := f.Get("priority"); pr.Type == gjson.Number {
			it.Priority = [...]string{"P0", "P0", "P1", "P2"}[min(max(int(pr.Num), 0), 3)]
		} else if pr.Type == gjson.String {
			if m := priorityTag().FindStringSubmatch(strings.TrimSpace(pr.Str)); m != nil {
				it.Priority = labelPriority(strings.ToLower(m[1]))
			}
		}
		// The pattern's title is the description; a description longer
		// than a line, or beside a title of its own, is kept whole.
		it.Title = oneLine(title)
		if it.Title == "" {
			it.Title = oneLine(desc)
		}
		var parts []string
		if desc != "" && desc != it.Title {
			parts = append(parts, desc)
		}
		if category != "" {
			parts = append(parts, "category: "+category)
		}
		it.Description = strings.Join(parts, "\n\n")
		p.Items = append(p.Items, it)
	}
	uniqueSources(p.Items)
	return p, nil
}

// textList reads a list of criteria as people write them: strings, one
// string of lines, or objects (a step's text and its other members, as
// JSON).
func textList(v gjson.Result) []string {
	if v.Type == gjson.String {
		return listLines(v.Str)
	}
	var out []string
	for _, e := range v.Array() {
		s := e.Raw
		if e.Type == gjson.String {
			s = e.Str
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// featureDone are the statuses of a feature list that has them (and no
// passes) meaning done.
var featureDone = map[string]bool{"done": true, "passing": true, "passed": true, "complete": true, "completed": true}

// parseTaskmaster reads Taskmaster's tasks.json: tagged, {"<tag>": {"tasks":
// [...], "metadata": …}}, or the older {"tasks": [...]} (the tag
// "master"). Every tag is read; a subtask (at any depth) is a task of its
// own, and its parent waits on it (the parent is done when its parts are).
// Ids and dependencies follow Taskmaster's own reader: a subtask's
// dependency without a dot names a sibling, one with a dot ("3.1") any
// subtask of the tag.
func parseTaskmaster(name string, data []byte) (*Plan, error) {
	doc, err := jsonDoc(name, data)
	if err != nil {
		return nil, err
	}
	if !doc.IsObject() {
		return nil, bad(name, "", "a Taskmaster file is a JSON object, got %s", kindOf(doc))
	}
	type tag struct {
		name string
		path string
		list gjson.Result
	}
	var tags []tag
	if t := doc.Get("tasks"); t.Exists() {
		tags = append(tags, tag{"master", "tasks", t})
	} else {
		doc.ForEach(func(k, v gjson.Result) bool {
			tags = append(tags, tag{k.Str, gjsonKey(k.Str) + ".tasks", v.Get("tasks")})
			return true
		})
	}
	p := &Plan{}
	w := &tmWalk{r: &reader{name: name}, p: p, undone: map[string][]string{}}
	for _, tg := range tags {
		if v := doc.Get(gjsonKey(tg.name)); tg.path != "tasks" && !v.IsObject() {
			return nil, bad(name, "", "%q is not a Taskmaster tag (an object with \"tasks\"), got %s", tg.name, kindOf(v))
		}
		if !tg.list.IsArray() {
			return nil, bad(name, tg.path, "must be a list of tasks, got %s", kindOf(tg.list))
		}
		p.Tags = append(p.Tags, tg.name)
		w.tag = tg.name
		if err := w.list(tg.list, tg.path, tmParent{priority: "P1"}); err != nil {
			return nil, err
		}
	}
	for _, it := range p.Items {
		if subs := w.undone[it.Source]; len(subs) > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("%s is done in the file while its subtasks %s are not: they are taken as done, as Taskmaster's set-status makes them",
				it.Source, strings.Join(subs, ", ")))
		}
	}
	return p, nil
}

// tmParent is what a task's subtasks take from it.
type tmParent struct {
	id       string // "" at the top
	index    int    // in the plan's items; -1 when skipped
	priority string // a subtask without its own takes its parent's
	skipped  string // why the parent was skipped: its subtasks are too
	done     string // the Source of the done task it is under, "" if none
}

type tmWalk struct {
	undone map[string][]string // under a done task (by Source), the subtasks the file has not done
	r      *reader
	p      *Plan
	tag    string
}

// list reads the tasks of list (a tag's tasks, a task's subtasks) under
// parent.
func (w *tmWalk) list(list gjson.Result, at string, parent tmParent) error {
	tasks := list.Array()
	ids := make([]string, len(tasks))
	seen := map[string]bool{}
	repeated := false
	for i, t := range tasks {
		where := fmt.Sprintf("%s.%d", at, i)
		if !t.IsObject() {
			return bad(w.r.name, where, "a task must be an object, got %s", kindOf(t))
		}
		id, err := tmID(w.r.name, t.Get("id"), where+".id")
		if err != nil && parent.id != "" && !t.Get("id").Exists() {
			// A subtask written without an id is known by its place.
			id, err = strconv.Itoa(i+1), nil
			w.p.Notes = append(w.p.Notes, fmt.Sprintf("%s:%s/%s: a subtask has no id: it is %s.%s, by its place", Taskmaster, w.tag, parent.id, parent.id, id))
		}
		if err != nil {
			return err
		}
		// Taskmaster once wrote a subtask's id as a number with its
		// parent's in front (92.1 under 92).
		if parent.id != "" {
			id = strings.TrimPrefix(id, parent.id+".")
		}
		repeated = repeated || seen[id]
		seen[id] = true
		ids[i] = id
	}
	if repeated && parent.id == "" {
		// Two tasks of one tag with one id: the later ones are told apart
		// by their order, as items of one text are.
		count := map[string]int{}
		for i, id := range ids {
			if count[id]++; count[id] > 1 {
				ids[i] = fmt.Sprintf("%s~%d", id, count[id])
				w.p.Notes = append(w.p.Notes, fmt.Sprintf("%s:%s/%s: the id is written more than once in the tag: the task at %s.%d is %s:%s/%s",
					Taskmaster, w.tag, id, at, i, Taskmaster, w.tag, ids[i]))
			}
		}
	}
	if repeated && parent.id != "" {
		// Subtasks that all carry their parent's id (Taskmaster wrote
		// 42.1–42.8 as "id": 42) are told apart by their place.
		w.p.Notes = append(w.p.Notes, fmt.Sprintf("%s:%s/%s: its subtasks' ids repeat (%s): they are numbered by their place, %s.1 to %s.%d",
			Taskmaster, w.tag, parent.id, strings.Join(ids, ", "), parent.id, parent.id, len(ids)))
		for i := range ids {
			ids[i] = strconv.Itoa(i + 1)
		}
	}
	for i, t := range tasks {
		where := fmt.Sprintf("%s.%d", at, i)
		id := ids[i]
		if parent.id != "" {
			id = parent.id + "." + id
		}
		self, err := w.task(t, where, id, parent)
		if err != nil {
			return err
		}
		if parent.index >= 0 && parent.id != "" && self.index >= 0 {
			up := &w.p.Items[parent.index]
			up.DependsOn = append(up.DependsOn, w.p.Items[self.index].Source)
			up.parts = append(up.parts, w.p.Items[self.index].Source)
		}
		sub := t.Get("subtasks")
		if sub.Exists() && sub.Type != gjson.Null && !sub.IsArray() {
			return bad(w.r.name, where+".subtasks", "must be a list, got %s", kindOf(sub))
		}
		if sub.IsArray() {
			if err := w.list(sub, where+".subtasks", self); err != nil {
				return err
			}
		}
	}
	return nil
}

var tmPriority = map[string]string{"critical": "P0", "high": "P0", "medium": "P1", "low": "P2"}

// task reads one task or subtask, id its full id ("3", "3.1", "3.1.2").
func (w *tmWalk) task(t gjson.Result, at, id string, parent tmParent) (tmParent, error) {
	r := w.r
	title := strings.TrimSpace(r.str(t.Get("title"), at+".title"))
	desc := r.str(t.Get("description"), at+".description")
	details := r.str(t.Get("details"), at+".details")
	strategy := r.str(t.Get("testStrategy"), at+".testStrategy")
	status := strings.ToLower(strings.TrimSpace(r.str(t.Get("status"), at+".status")))
	prio := r.str(t.Get("priority"), at+".priority")
	var criteria []string
	if ac := t.Get("acceptanceCriteria"); ac.Type == gjson.String {
		criteria = listLines(ac.Str)
	} else {
		criteria = r.strs(ac, at+".acceptanceCriteria")
	}
	if r.err != nil {
		return tmParent{}, r.err
	}
	if title == "" {
		return tmParent{}, bad(r.name, at+".title", "is missing or empty")
	}
	priority := parent.priority
	if prio != "" {
		if pr, ok := tmPriority[strings.ToLower(strings.TrimSpace(prio))]; ok {
			priority = pr
		} else if m := priorityTag().FindStringSubmatch(strings.TrimSpace(prio)); m != nil {
			priority = labelPriority(strings.ToLower(m[1]))
		} else {
			w.p.Notes = append(w.p.Notes, fmt.Sprintf("%s:%s/%s: priority %q is not Taskmaster's (high, medium, low): it takes %s", Taskmaster, w.tag, id, prio, priority))
		}
	}
	it := Item{Source: fmt.Sprintf("%s:%s/%s", Taskmaster, w.tag, id), Title: oneLine(title), Priority: priority,
		Description: strings.TrimSpace(strings.TrimSpace(desc) + "\n\n" + strings.TrimSpace(details)),
		Done:        status == "done" || status == "completed", DependsOn: []string{}, at: at}
	if s := strings.TrimSpace(strategy); s != "" {
		it.Acceptance = []string{s}
	}
	it.Acceptance = append(it.Acceptance, criteria...)
	deps := t.Get("dependencies")
	if deps.Exists() && deps.Type != gjson.Null && !deps.IsArray() {
		return tmParent{}, bad(r.name, at+".dependencies", "must be a list of task ids, got %s", kindOf(deps))
	}
	for j, d := range deps.Array() {
		ids, err := tmID(r.name, d, fmt.Sprintf("%s.dependencies[%d]", at, j))
		if err != nil {
			return tmParent{}, err
		}
		// One string may hold several ids ("61.11,61.12"), as an agent
		// passed them to add-dependency.
		for _, dep := range strings.FieldsFunc(ids, func(c rune) bool { return c == ',' || c == ' ' }) {
			// Taskmaster's reader: an id with a dot names any subtask of
			// the tag; a subtask's dependency without one names a sibling.
			if parent.id != "" && !strings.Contains(dep, ".") {
				dep = parent.id + "." + dep
			}
			it.DependsOn = append(it.DependsOn, fmt.Sprintf("%s:%s/%s", Taskmaster, w.tag, dep))
		}
	}
	self := tmParent{id: id, index: -1, priority: priority, done: parent.done}
	if it.Done && self.done == "" {
		self.done = it.Source
	}
	// Taskmaster's set-status marks a task's subtasks done with it, and its
	// next never offers a subtask of a done task: under a done task, a
	// subtask the file has not done is done.
	if parent.done != "" && !it.Done && status != "cancelled" && parent.skipped == "" {
		it.Done, it.fileOpen = true, true
		w.undone[parent.done] = append(w.undone[parent.done], strings.TrimPrefix(it.Source, Taskmaster+":"+w.tag+"/"))
	}
	switch {
	case parent.skipped != "":
		self.skipped = parent.skipped
		w.p.Skipped = append(w.p.Skipped, Skipped{Source: it.Source, Title: it.Title, Why: parent.skipped})
	case status == "cancelled":
		self.skipped = "its parent " + it.Source + " is cancelled"
		w.p.Skipped = append(w.p.Skipped, Skipped{Source: it.Source, Title: it.Title, Why: "cancelled"})
	default:
		w.p.Items = append(w.p.Items, it)
		self.index = len(w.p.Items) - 1
	}
	return self, nil
}

// tmID reads a Taskmaster id: a number (92, or 92.1 as Taskmaster once
// wrote a subtask), or a string ("3", "3.1").
func tmID(name string, v gjson.Result, where string) (string, error) {
	switch {
	case v.Type == gjson.Number && v.Num == float64(int64(v.Num)) && v.Num >= 0:
		return strconv.FormatInt(int64(v.Num), 10), nil
	case v.Type == gjson.Number && v.Num > 0 && !strings.ContainsAny(v.Raw, "eE-"):
		return v.Raw, nil
	case v.Type == gjson.String && strings.TrimSpace(v.Str) != "":
		return strings.TrimSpace(v.Str), nil
	}
	return "", bad(name, where, "must be a task id (a number or a string), got %s", rawOr(v))
}

// beadsRecord is one issue of a Beads file, and where it is.
type beadsRecord struct {
	v      gjson.Result
	where  string
	line   int
	at     string
	inLine bool
}

// parseBeads reads Beads' issues.jsonl, one issue a line, or the JSON list
// `bd list --json` writes. Only blocking dependencies ("blocks", the older
// export's "blocked-by", "conditional-blocks", "waits-for") make a task
// wait; "parent-child" makes the parent (an epic) wait on its child;
// links that are not order ("related", "discovered-from", …) are not
// read. Priority 0–1 is P0, 2 (Beads' default) P1, 3–4 P2; closed is
// done. What is not work is skipped, with why: a tombstone (deleted), an
// ephemeral wisp, a pinned or hooked bead, an agent's, a convoy's or a
// message's.
func parseBeads(name string, data []byte, beside Beside) (*Plan, error) {
	var records []beadsRecord
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		doc, err := jsonDoc(name, data)
		if err != nil {
			return nil, err
		}
		for i, v := range doc.Array() {
			records = append(records, beadsRecord{v: v, where: fmt.Sprintf("[%d]", i), line: -1, at: fmt.Sprint(i)})
		}
	} else if len(t) > 0 && t[0] == '{' && bytes.Contains(t, []byte("\n")) && gjson.ValidBytes(t) {
		// One issue written over several lines (`bd show --json`).
		records = append(records, beadsRecord{v: gjson.ParseBytes(t), where: "the issue", line: -1, at: ""})
	} else {
		for n, line := range lines(data) {
			where := fmt.Sprintf("line %d", n+1)
			if strings.TrimSpace(line) == "" {
				continue
			}
			if !gjson.Valid(line) {
				return nil, bad(name, where, "not valid JSON (each line of a Beads file is one issue)")
			}
			records = append(records, beadsRecord{v: gjson.Parse(line), where: where, line: n, inLine: true})
		}
	}
	p := &Plan{}
	r := &reader{name: name}
	side, err := beadsSideLinks(name, records, beside, p)
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	last := map[string]int{} // the record each id is read from: its last
	for n, rec := range records {
		last[strings.TrimSpace(rec.v.Get("id").Str)] = n
	}
	type link struct{ child, parent string }
	var parents []link
	for n, rec := range records {
		v, where := rec.v, rec.where
		if !v.IsObject() {
			return nil, bad(name, where, "an issue must be a JSON object, got %s", kindOf(v))
		}
		id := strings.TrimSpace(r.str(v.Get("id"), where+": id"))
		title := strings.TrimSpace(r.str(v.Get("title"), where+": title"))
		desc := r.str(v.Get("description"), where+": description")
		accept := r.str(v.Get("acceptance_criteria"), where+": acceptance_criteria")
		status := r.str(v.Get("status"), where+": status")
		kind := r.str(v.Get("issue_type"), where+": issue_type")
		if r.err != nil {
			return nil, r.err
		}
		if id == "" {
			return nil, bad(name, where+": id", "is missing or empty")
		}
		if title == "" {
			return nil, bad(name, where+": title", "is missing or empty")
		}
		if later := last[id]; later != n {
			// A union merge of two clones writes an issue twice; bd
			// import reads the later line over the earlier.
			p.Notes = append(p.Notes, fmt.Sprintf("%s:%s is on %s and %s: the later line is read, as bd import does",
				Beads, id, strings.Replace(where, "line ", "lines ", 1), strings.TrimPrefix(records[later].where, "line ")))
			continue
		}
		priority := "P1"
		if pr := v.Get("priority"); pr.Exists() && pr.Type != gjson.Null {
			if pr.Type != gjson.Number || pr.Num != float64(int(pr.Num)) || pr.Num < 0 || pr.Num > 4 {
				return nil, bad(name, where+": priority", "must be a whole number from 0 to 4, got %s", pr.Raw)
			}
			priority = [...]string{"P0", "P0", "P1", "P2", "P2"}[int(pr.Num)]
		}
		it := Item{Source: Beads + ":" + id, Title: oneLine(title), Description: strings.TrimSpace(desc),
			Acceptance: listLines(accept), Priority: priority, Done: status == "closed", DependsOn: []string{},
			line: rec.line, at: rec.at, inLine: rec.inLine}
		deps := v.Get("dependencies")
		if deps.Exists() && deps.Type != gjson.Null && !deps.IsArray() {
			return nil, bad(name, where+": dependencies", "must be a list, got %s", kindOf(deps))
		}
		for j, d := range append(deps.Array(), side[id]...) {
			dw := fmt.Sprintf("%s: dependencies[%d]", where, j)
			if j >= len(deps.Array()) {
				dw = fmt.Sprintf("dependencies.jsonl: %s", d.Get("depends_on_id").Str)
			}
			on := strings.TrimSpace(r.str(d.Get("depends_on_id"), dw+".depends_on_id"))
			typ := r.str(d.Get("type"), dw+".type")
			if from := strings.TrimSpace(r.str(d.Get("issue_id"), dw+".issue_id")); from != "" && from != id && r.err == nil {
				r.err = bad(name, dw+".issue_id", "is %q, not this issue's id %q", from, id)
			}
			if r.err != nil {
				return nil, r.err
			}
			if on == "" {
				return nil, bad(name, dw+".depends_on_id", "is missing or empty")
			}
			switch {
			case typ == "parent-child":
				parents = append(parents, link{child: id, parent: on})
			case beadsBlocking[typ]:
				it.DependsOn = append(it.DependsOn, Beads+":"+on)
			case !beadsNotOrder[typ]:
				p.Notes = append(p.Notes, fmt.Sprintf("%s: its link to %s is of type %q, which the harness does not know: not read as an order", it.Source, on, typ))
			}
		}
		if why := beadsNotWork(v, status, kind); why != "" {
			p.Skipped = append(p.Skipped, Skipped{Source: it.Source, Title: it.Title, Why: why})
			continue
		}
		index[id] = len(p.Items)
		p.Items = append(p.Items, it)
	}
	for _, l := range parents {
		if i, ok := index[l.parent]; ok {
			p.Items[i].DependsOn = append(p.Items[i].DependsOn, Beads+":"+l.child)
			p.Items[i].parts = append(p.Items[i].parts, Beads+":"+l.child)
		}
	}
	return p, nil
}

// beadsSideLinks reads the dependencies of a Beads backup
// (`.beads/backup/issues.jsonl`, whose issues carry none) from
// dependencies.jsonl beside it, by issue.
func beadsSideLinks(name string, records []beadsRecord, beside Beside, p *Plan) (map[string][]gjson.Result, error) {
	if beside == nil {
		return nil, nil
	}
	for _, rec := range records {
		if rec.v.Get("dependencies").Exists() {
			return nil, nil // an export: the dependencies are inline
		}
	}
	data := beside("dependencies.jsonl")
	if data == nil {
		return nil, nil
	}
	out := map[string][]gjson.Result{}
	for n, line := range lines(data) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		d := gjson.Parse(line)
		if !gjson.Valid(line) || !d.IsObject() || d.Get("issue_id").Type != gjson.String {
			return nil, bad(filepath.Join(filepath.Dir(name), "dependencies.jsonl"), fmt.Sprintf("line %d", n+1), "not a Beads dependency ({issue_id, depends_on_id, type})")
		}
		id := strings.TrimSpace(d.Get("issue_id").Str)
		out[id] = append(out[id], d)
	}
	p.Notes = append(p.Notes, fmt.Sprintf("%s: the issues carry no dependencies (a Beads backup): read from dependencies.jsonl beside it", name))
	return out, nil
}

// Beads' dependency types: those that are an order of work, and those
// that are not (any other is named in a note).
var (
	beadsBlocking = map[string]bool{"": true, "blocks": true, "blocked-by": true, "conditional-blocks": true, "waits-for": true}
	beadsNotOrder = map[string]bool{"related": true, "relates-to": true, "discovered-from": true, "replies-to": true,
		"duplicates": true, "supersedes": true, "tracks": true, "caused-by": true, "validates": true,
		"authored-by": true, "assigned-to": true, "approved-by": true, "delegated-from": true, "until": true}
	// beadsNotTasks are the types of bead that are not work: an agent's
	// own record, a role, a convoy (a batch that tracks other beads), a
	// message, an event.
	beadsNotTasks = map[string]string{"agent": "an agent's record", "role": "a role's definition", "convoy": "a convoy (it tracks other beads)",
		"message": "a message between agents", "event": "an event record"}
)

// beadsNotWork says why an issue is not a task ("" when it is one).
func beadsNotWork(v gjson.Result, status, kind string) string {
	switch {
	case status == "tombstone":
		return "deleted (tombstone)"
	case v.Get("ephemeral").Bool() || v.Get("wisp").Bool():
		return "an ephemeral wisp, never part of the plan"
	case status == "pinned":
		return "pinned: a bead that stays open as a reference, not work to finish"
	case status == "hooked":
		return "hooked: on a Beads agent's hook, work another agent holds"
	case beadsNotTasks[kind] != "":
		return beadsNotTasks[kind] + ", not work"
	}
	return ""
}

// dependsLine finds "depends on #12", "blocked by #3, #4 and #5" in an
// issue's body.
// Compiled on first use: the harness command starts at every verb an
// agent runs, and most verbs read no plan.
var (
	dependsLine = sync.OnceValue(func() *regexp.Regexp {
		// Markdown emphasis may wrap the words: "- **Blocked by**: #155".
		return regexp.MustCompile(`(?i)\b(?:depends\s+on|blocked\s+by|dependencies\s*:)[*_]*\s*:?[*_]*\s*((?:(?:#\d+|https://github\.com/[\w.-]+/[\w.-]+/issues/\d+)(?:\s*,\s*|\s+and\s+|\s+)?)+)`)
	})
	// dependsHeading opens a section of a body whose list items are the
	// issues it waits on ("## Blocked by", "**Depends on:**").
	dependsHeading = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^\s*(?:#{1,6}\s*|[*_]{2})?\s*(?:depends\s+on|blocked\s+by|blockers|dependencies)\s*:?\s*(?:[*_]{2})?\s*:?\s*$`)
	})
	listLabel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*[*_]*[\pL][\pL\s-]*[*_]*\s*:(?:[^/]|$)`) })
	issueRef  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(https://github\.com/[\w.-]+/[\w.-]+/issues/)?#?(\d+)\b`)
	})
	priorityTag = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(?:priority\s*[:/=_ -]?\s*)?(p[0-4]|critical|urgent|high|medium|normal|low)(?:\s*[:/=_ -]?\s*priority)?$`)
	})
	boxLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(\s*)(?:[-*+]|\d+[.)])\s+\[([ xX/~-])\]\s+(.*\S)\s*$`)
	})
)

// parseGitHub reads `gh issue list --json number,title,body,labels,state`:
// a list of issues. A closed issue is done; "depends on #N" and "blocked
// by #N" in a body make it wait on issue N; the body's task list ("- [ ]
// …") is its acceptance criteria; a label P0–P4 or priority: high|medium|
// low (critical, urgent) sets its priority.
func parseGitHub(name string, data []byte) (*Plan, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' && !gjson.ValidBytes(t) {
		return parseGitHubLines(name, data)
	}
	doc, err := jsonDoc(name, data)
	if err != nil {
		return nil, err
	}
	issues, whole := doc.Array(), false
	if doc.IsObject() && doc.Get("number").Exists() {
		issues, whole = []gjson.Result{doc}, true // `gh issue view N --json …`
	} else if !doc.IsArray() {
		return nil, bad(name, "", "`gh issue list --json …` writes a JSON list of issues, got %s", kindOf(doc))
	}
	r := &reader{name: name}
	p := &Plan{}
	for i, v := range issues {
		where, at := fmt.Sprintf("[%d]", i), fmt.Sprint(i)
		if whole {
			where, at = "issue", ""
		}
		if !v.IsObject() {
			return nil, bad(name, where, "an issue must be an object, got %s", kindOf(v))
		}
		num := v.Get("number")
		if num.Type != gjson.Number || num.Num != float64(int64(num.Num)) || num.Num < 1 {
			return nil, bad(name, where+".number", "must be the issue's number, got %s", rawOr(num))
		}
		title := strings.TrimSpace(r.str(v.Get("title"), where+".title"))
		body := r.str(v.Get("body"), where+".body")
		state := r.str(v.Get("state"), where+".state")
		if r.err != nil {
			return nil, r.err
		}
		if title == "" {
			return nil, bad(name, where+".title", "is missing or empty")
		}
		it := Item{Source: fmt.Sprintf("%s:#%d", GitHub, int64(num.Num)), Title: oneLine(title),
			Description: strings.TrimSpace(body), Priority: "P1", Done: strings.EqualFold(state, "closed"),
			DependsOn: []string{}, at: at}
		if state == "open" || state == "closed" {
			it.mark = "lower" // GitHub's REST API writes the state in lower case
		}
		labels := v.Get("labels")
		if labels.Exists() && labels.Type != gjson.Null && !labels.IsArray() {
			return nil, bad(name, where+".labels", "must be a list, got %s", kindOf(labels))
		}
		var said []string           // the priority labels, for a note when they disagree
		differ := map[string]bool{} // the priorities they give
		for _, l := range labels.Array() {
			label := l.Get("name").Str
			if l.Type == gjson.String {
				label = l.Str
			}
			if m := priorityTag().FindStringSubmatch(strings.TrimSpace(label)); m != nil {
				pr := labelPriority(strings.ToLower(m[1]))
				if len(said) == 0 || pr < it.Priority {
					it.Priority = pr // the most urgent label wins
				}
				said = append(said, label)
				differ[pr] = true
			}
		}
		if len(differ) > 1 {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: its labels give more than one priority (%s): it takes the most urgent, %s", it.Source, strings.Join(said, ", "), it.Priority))
		}
		repo := repoOf(v.Get("url").Str)
		for _, ref := range bodyDeps(body) {
			n, other := ref.number, repoOf(ref.url)
			if ref.url != "" && repo != "" && other != repo {
				p.Notes = append(p.Notes, fmt.Sprintf("%s depends on %s, an issue of another repository: that dependency is left out", it.Source, ref.url))
				continue
			}
			if dep := GitHub + ":#" + n; !slices.Contains(it.DependsOn, dep) {
				it.DependsOn = append(it.DependsOn, dep)
			}
		}
		for _, l := range lines([]byte(body)) {
			if c := checkbox(l); c != nil && !c.cancelled {
				it.Acceptance = append(it.Acceptance, c.text)
			}
		}
		// GitHub's REST API (`gh api repos/O/R/issues`) lists pull
		// requests among the issues.
		if v.Get("pull_request").IsObject() || v.Get("isPullRequest").Bool() {
			p.Skipped = append(p.Skipped, Skipped{Source: it.Source, Title: it.Title, Why: "a pull request, not an issue"})
			continue
		}
		p.Items = append(p.Items, it)
	}
	return p, nil
}

// parseGitHubLines reads one issue a line, as `gh issue list --json …
// --jq '.[]'` writes them.
func parseGitHubLines(name string, data []byte) (*Plan, error) {
	p := &Plan{}
	for n, line := range lines(data) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !gjson.Valid(line) {
			return nil, bad(name, fmt.Sprintf("line %d", n+1), "not valid JSON (each line is one issue)")
		}
		one, err := parseGitHub(name, []byte(line))
		if err != nil {
			var fe *failure.Error
			if errors.As(err, &fe) {
				fe.Message = strings.Replace(fe.Message, name+": issue", fmt.Sprintf("%s: line %d", name, n+1), 1)
			}
			return nil, err
		}
		for i := range one.Items {
			one.Items[i].line, one.Items[i].inLine = n, true
		}
		p.Items = append(p.Items, one.Items...)
		p.Skipped = append(p.Skipped, one.Skipped...)
		p.Notes = append(p.Notes, one.Notes...)
	}
	return p, nil
}

// issueLink is an issue a body names: its number, and the URL it was
// written as ("" for "#N").
type issueLink struct{ number, url string }

// bodyDeps reads the issues a body says it waits on: "depends on #12",
// "blocked by #3, #4 and #5", "- **Blocked by**: #155", and the list
// items under a "## Blocked by" heading (#N or an issue's URL).
func bodyDeps(body string) []issueLink {
	var out []issueLink
	refs := func(text string) {
		for _, m := range issueRef().FindAllStringSubmatch(text, -1) {
			if m[1] == "" && !strings.Contains(m[0], "#") {
				continue // a bare number is not an issue
			}
			url := ""
			if m[1] != "" {
				url = m[1] + m[2]
			}
			out = append(out, issueLink{number: m[2], url: url})
		}
	}
	for _, m := range dependsLine().FindAllStringSubmatch(body, -1) {
		refs(m[1])
	}
	section := false
	for _, l := range lines([]byte(body)) {
		t := strings.TrimSpace(l)
		switch {
		case dependsHeading().MatchString(l):
			section = true
		case !section:
		case t == "":
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "+ "):
			// An item with a label of its own ("**Related**: #140",
			// "Blocked by: #3", read above) is not a bare dependency.
			if !listLabel().MatchString(t[2:]) {
				refs(t)
			}
		default:
			section = false
		}
	}
	return out
}

// repoOf is "OWNER/REPO" of a GitHub issue's URL, "" for anything else.
func repoOf(url string) string {
	rest, ok := strings.CutPrefix(url, "https://github.com/")
	if !ok {
		return ""
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 3 {
		return ""
	}
	return strings.ToLower(parts[0] + "/" + parts[1])
}

func labelPriority(l string) string {
	switch l {
	case "p0", "critical", "urgent", "high":
		return "P0"
	case "p1", "medium", "normal":
		return "P1"
	}
	return "P2"
}

// box is one checklist line: "- [ ] text", "* [x] text", "1. [ ] text".
// Besides "[ ]" and "[x]", task-list plugins (Obsidian's Tasks, VS Code's
// Markdown checkboxes) write "[/]" or "[~]" for started, "[-]" for
// cancelled.
type box struct {
	indent    int
	done      bool
	cancelled bool
	text      string
}

// checkbox reads a checklist line, nil for any other.
func checkbox(line string) *box {
	m := boxLine().FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	return &box{indent: len(strings.ReplaceAll(m[1], "\t", "    ")), done: m[2] == "x" || m[2] == "X", cancelled: m[2] == "-", text: m[3]}
}

// parseMarkdown reads a checklist: every "- [ ] title" line is a task,
// "- [x]" a done one, other lines are ignored. An item nested under
// another is a task of its own, and the item above it waits on it (the
// outer item is done when its parts are). A line has no id, so its Source
// is the hash of its text.
func parseMarkdown(name string, data []byte) (*Plan, error) {
	p := &Plan{}
	type open struct{ indent, index int }
	var stack []open
	fence := "" // the fence of the code block the line is in
	comment := false
	for n, line := range lines(data) {
		// An HTML comment hides its lines (a template's example, an item
		// put aside).
		if t := strings.TrimSpace(line); fence == "" && (comment || strings.HasPrefix(t, "<!--")) {
			comment = !strings.Contains(t, "-->")
			continue
		}
		if f := fenceOf(line); fence == "" && f != "" {
			fence = f
			continue
		} else if fence != "" {
			if strings.HasPrefix(f, fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), fence[:1])) == "" {
				fence = "" // a closing fence: the same character, as long, nothing after it
			}
			continue
		}
		c := checkbox(line)
		if c == nil {
			if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") {
				stack = stack[:0] // a heading or a paragraph ends the nesting
			}
			continue
		}
		title := plainText(c.text)
		if c.cancelled {
			p.Skipped = append(p.Skipped, Skipped{Source: Markdown + ":" + shortHash(c.text), Title: title, Why: "cancelled ([-])"})
			continue
		}
		if placeholder(title) {
			p.Skipped = append(p.Skipped, Skipped{Source: fmt.Sprintf("%s:line %d", Markdown, n+1), Title: title,
				Why: "a placeholder, not a task"})
			continue
		}
		it := Item{Source: Markdown + ":" + shortHash(c.text), Title: title, Priority: "P1", Done: c.done,
			DependsOn: []string{}, line: n}
		for len(stack) > 0 && stack[len(stack)-1].indent >= c.indent {
			stack = stack[:len(stack)-1]
		}
		p.Items = append(p.Items, it)
		if len(stack) > 0 {
			parent := stack[len(stack)-1].index
			p.Items[parent].DependsOn = append(p.Items[parent].DependsOn, "\x00"+strconv.Itoa(len(p.Items)-1))
		}
		stack = append(stack, open{c.indent, len(p.Items) - 1})
	}
	if len(p.Items) == 0 && len(p.Skipped) == 0 {
		return nil, bad(name, "", "no checklist items (lines like `- [ ] title`)")
	}
	uniqueSources(p.Items)
	// The parents' links were made by index: the Sources are final now.
	for i := range p.Items {
		for j, d := range p.Items[i].DependsOn {
			if k, ok := strings.CutPrefix(d, "\x00"); ok {
				idx, _ := strconv.Atoi(k)
				p.Items[i].DependsOn[j] = p.Items[idx].Source
				p.Items[i].parts = append(p.Items[i].parts, p.Items[idx].Source)
			}
		}
	}
	return p, nil
}

// fenceOf is the fence a line opens or closes a code block with ("```",
// "~~~~"), "" for any other line.
func fenceOf(line string) string {
	t := strings.TrimSpace(line)
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(t, c+c+c) {
			return t[:len(t)-len(strings.TrimLeft(t, c))]
		}
	}
	return ""
}

// plainText takes Markdown's emphasis off a title: "**Auth**: login" is
// "Auth: login". Code spans keep theirs.
func plainText(s string) string {
	for _, m := range []string{"**", "__"} {
		if strings.Count(s, m) >= 2 && !strings.Contains(s, "`") {
			s = strings.ReplaceAll(s, m, "")
		}
	}
	return strings.TrimSpace(s)
}

// placeholder reports whether a checklist item's text holds no work of
// its own ("TBD", "TODO", "..."): a list of them is not a list of tasks.
func placeholder(s string) bool {
	switch strings.ToLower(strings.Trim(s, " .:!?…-*_()[]")) {
	case "", "tbd", "tba", "todo", "to do", "wip", "n/a", "na", "tk", "xxx", "fixme", "placeholder", "to be determined", "to be defined":
		return true
	}
	return false
}

// listLines reads a text of criteria as a list: one a line, list markers
// and checkboxes taken off.
func listLines(s string) []string {
	var out []string
	for _, l := range lines([]byte(s)) {
		if c := checkbox(l); c != nil {
			l = c.text
		} else {
			l = strings.TrimSpace(l)
			for _, m := range []string{"- ", "* ", "+ "} {
				l = strings.TrimPrefix(l, m)
			}
		}
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// oneLine is a title on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func kindOf(v gjson.Result) string {
	switch {
	case !v.Exists():
		return "nothing"
	case v.IsArray():
		return "a list"
	case v.IsObject():
		return "an object"
	case v.Type == gjson.String:
		return "a string"
	case v.Type == gjson.Number:
		return "a number"
	case v.IsBool():
		return "a boolean"
	case v.Type == gjson.Null:
		return "null"
	}
	return "nothing"
}

func rawOr(v gjson.Result) string {
	if !v.Exists() {
		return "nothing"
	}
	return v.Raw
}
