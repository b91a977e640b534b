package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// parseFeatureList reads Anthropic's feature_list.json: a list of
// {category, description, steps[], passes}, or the same list wrapped in an
// object ({"features": [...]}, as most files of that name in the wild
// are); and the Ralph loop's prd.json, whose "userStories" are features
// with an id, a title, acceptanceCriteria, a priority (1 first), passes
// and notes. A feature has no id, so its Source is the hash of its description
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
	if k := wrappedFeatures(doc); k != "" {
		list, prefix = doc.Get(k), k+"."
	}
	if !list.IsArray() {
		return nil, bad(name, "", "a feature list is a JSON list of features (or an object with one as \"features\", or Ralph's prd.json with its \"userStories\"), got %s", kindOf(doc))
	}
	r := &reader{name: name}
	p := &Plan{}
	// A "feature" several features share is the group they are in ("F1:
	// Authentication" over fifty test cases), not a title: each is told
	// by its description, and the group goes with category.
	groups := map[string]int{}
	for _, f := range list.Array() {
		if g := f.Get("feature"); g.Type == gjson.String && strings.TrimSpace(g.Str) != "" {
			groups[strings.TrimSpace(g.Str)]++
		}
	}
	unknown := map[string][]string{} // the features of each status word not known
	var words []string
	for i, f := range list.Array() {
		where := fmt.Sprintf("%s[%d]", strings.TrimSuffix(prefix, "."), i)
		if !f.IsObject() {
			return nil, bad(name, where, "a feature must be an object, got %s", kindOf(f))
		}
		desc := strings.TrimSpace(r.str(f.Get("description"), where+".description"))
		var title, group string
		for _, k := range []string{"title", "name"} {
			if title == "" {
				title = strings.TrimSpace(r.str(f.Get(k), where+"."+k))
			}
		}
		if title == "" {
			title = strings.TrimSpace(r.str(f.Get("feature"), where+".feature"))
			if desc != "" && groups[title] > 1 {
				title, group = "", title
			}
		}
		category := r.str(f.Get("category"), where+".category")
		notes := strings.TrimSpace(r.str(f.Get("notes"), where+".notes"))
		var steps []string
		for _, k := range []string{"steps", "acceptance", "acceptance_criteria", "acceptanceCriteria"} {
			steps = append(steps, textList(f.Get(k))...)
		}
		// Lists that gate "passing" on a harness's verification call it
		// "state" (beside "verification_command" and "evidence").
		statusKey := "status"
		if !f.Get("status").Exists() && f.Get("state").Exists() {
			statusKey = "state"
		}
		status := r.str(f.Get(statusKey), where+"."+statusKey)
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
			it.mark = statusKey
			if w := strings.ToLower(strings.TrimSpace(status)); !featureDone[w] && !featureNotDone[w] {
				if unknown[status] == nil {
					words = append(words, status)
				}
				unknown[status] = append(unknown[status], it.Source)
			}
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
		} else if said, ok := tagPriority(pr.Str); ok {
			it.Priority = said
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
		if group != "" {
			parts = append(parts, "feature: "+group)
		}
		if category != "" {
			parts = append(parts, "category: "+category)
		}
		if notes != "" {
			parts = append(parts, "notes: "+notes)
		}
		it.Description = strings.Join(parts, "\n\n")
		p.Items = append(p.Items, it)
	}
	for _, w := range words {
		p.Notes = append(p.Notes, fmt.Sprintf("the status %q is not one the harness knows (%s): those features come in not done", w, strings.Join(shorten(unknown[w], 5), ", ")))
	}
	uniqueSources(p.Items)
	return p, nil
}

// shorten is ids, the first n of them and how many more.
func shorten(ids []string, n int) []string {
	if len(ids) <= n {
		return ids
	}
	return append(slices.Clone(ids[:n]), fmt.Sprintf("and %d more", len(ids)-n))
}

// wrappedFeatures is the member of doc that holds its list of features
// when doc is an object wrapping one ("features", or a Ralph prd.json's
// "userStories"), "" otherwise: Detect and the reader agree on it. A list
// named "stories" or "tasks" is one when its first item says whether it
// passes: Taskmaster's tasks, the other "tasks" file, never do.
func wrappedFeatures(doc gjson.Result) string {
	if !doc.IsObject() {
		return ""
	}
	for _, k := range []string{"features", "userStories", "stories", "tasks"} {
		list := doc.Get(k)
		if !list.IsArray() {
			continue
		}
		if (k == "stories" || k == "tasks") && !list.Get("0.passes").Exists() {
			continue
		}
		return k
	}
	return ""
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
var featureDone = map[string]bool{"done": true, "pass": true, "passing": true, "passed": true, "complete": true, "completed": true}

// featureNotDone are the statuses known to mean not done yet; any other
// word comes in not done, with a warning.
var featureNotDone = map[string]bool{"": true, "pending": true, "todo": true, "to do": true, "open": true, "not_started": true, "not started": true,
	"in_progress": true, "in-progress": true, "in progress": true, "wip": true, "blocked": true, "fail": true, "failing": true, "failed": true}
