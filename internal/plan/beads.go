package plan

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

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
// ephemeral wisp, a pinned or hooked bead, an agent's, a convoy's, a
// message's, a merge request, a gate, a molecule's root; and a line that
// is no issue at all (a memory bd export writes beside the issues).
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
		if beadsOther(rec.v) == "" {
			last[strings.TrimSpace(rec.v.Get("id").Str)] = n
		}
	}
	type link struct{ child, parent string }
	var parents []link
	var created []time.Time // each item's creation, in p.Items' order
	for n, rec := range records {
		v, where := rec.v, rec.where
		if !v.IsObject() {
			return nil, bad(name, where, "an issue must be a JSON object, got %s", kindOf(v))
		}
		if why := beadsOther(v); why != "" {
			source, title := where, ""
			if id := v.Get("id"); id.Type == gjson.String && strings.TrimSpace(id.Str) != "" {
				source = Beads + ":" + strings.TrimSpace(id.Str)
			}
			for _, k := range []string{"title", "key", "_schema"} {
				if s := v.Get(k); title == "" && s.Type == gjson.String {
					title = oneLine(s.Str)
				}
			}
			p.Skipped = append(p.Skipped, Skipped{Source: source, Title: title, Why: why})
			continue
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
		created = append(created, createdAt(v))
	}
	for _, l := range parents {
		if i, ok := index[l.parent]; ok {
			p.Items[i].DependsOn = append(p.Items[i].DependsOn, Beads+":"+l.child)
			p.Items[i].parts = append(p.Items[i].parts, Beads+":"+l.child)
		}
	}
	oldestFirst(p.Items, created)
	return p, nil
}

// createdAt is when a Beads issue was created, zero when it does not say.
func createdAt(v gjson.Result) time.Time {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v.Get("created_at").Str))
	if err != nil {
		return time.Time{}
	}
	return t
}

// oldestFirst puts items in the order they were created (created[i] is
// items[i]'s) when every one says when: bd export writes the issues by
// id, and an id is a hash, so the file's order is no order of work;
// bd ready offers the oldest of one priority first, and the tasks' ids,
// which order the work among tasks of one priority, follow it. Items
// that do not all say keep the file's order.
func oldestFirst(items []Item, created []time.Time) {
	if slices.ContainsFunc(created, time.Time.IsZero) {
		return
	}
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return created[a].Compare(created[b]) })
	sorted := make([]Item, len(items))
	for i, j := range order {
		sorted[i] = items[j]
	}
	copy(items, sorted)
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
	// own record, a role, a rig (Gas Town's), a convoy (a batch that
	// tracks other beads), a message, an event; and those bd ready never
	// offers as work either (its readyWorkExcludeTypes): a merge request
	// (Gas Town's merge queue entry for a branch whose work is another
	// bead's), a gate (a wait on a timer, a CI run or a person), a
	// molecule (a workflow's root, whose steps are the work).
	beadsNotTasks = map[string]string{"agent": "an agent's record", "role": "a role's definition", "convoy": "a convoy (it tracks other beads)",
		"message": "a message between agents", "event": "an event record", "rig": "a rig's record",
		"merge-request": "a merge request (a branch in the merge queue: the work is its source bead's)",
		"gate":          "a gate (a wait on a timer, a CI run or a person)",
		"molecule":      "a molecule (a workflow's root: its steps are the work)"}
)

// beadsOther says why a record of a Beads export is not an issue, "" when
// it is one. bd export tags every line with "_type" since memories went
// into it ("issue", or "memory": `bd remember`'s notes, a key and a
// value), and bd import reads only the issues; exports kept in a stable
// order may begin with a header ("_schema"), which bd import passes over
// too.
func beadsOther(v gjson.Result) string {
	switch t := v.Get("_type"); {
	case t.Type == gjson.String && t.Str == "memory":
		return `a Beads memory ("_type": "memory", what bd remember keeps), not an issue`
	case t.Type == gjson.String && t.Str != "" && t.Str != "issue":
		return fmt.Sprintf(`a Beads record of type %q ("_type"), not an issue`, t.Str)
	case v.Get("_schema").Exists() && !v.Get("id").Exists():
		return `the export's header ("_schema"), not an issue`
	}
	return ""
}

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
