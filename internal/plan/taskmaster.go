package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

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
	// Beside its tags a file may keep members of other tools (a version,
	// a "_meta"): with a tag there, they are named and passed over.
	var kept []tag
	for _, tg := range tags {
		if tg.path != "tasks" && !tg.list.Exists() {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: %q holds no \"tasks\": not a tag, passed over", name, tg.name))
			continue
		}
		kept = append(kept, tg)
	}
	if len(kept) > 0 {
		tags = kept
	} else {
		p.Notes = nil
	}
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

// PriorityWord is the harness priority of a priority word as Taskmaster
// writes it (critical, high, medium, low, in any case); false for another.
func PriorityWord(w string) (string, bool) {
	p, ok := tmPriority[strings.ToLower(strings.TrimSpace(w))]
	return p, ok
}

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
		if pr, ok := tagPriority(prio); ok {
			priority = pr
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
