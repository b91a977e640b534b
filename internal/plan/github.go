package plan

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/failure"
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
			if c := checkbox(l); c != nil {
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
