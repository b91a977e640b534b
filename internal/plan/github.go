package plan

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/failure"
)

// parseGitHub reads `gh issue list --json number,title,body,labels,state`:
// a list of issues. A closed issue is done; "depends on #N" and "blocked
// by #N" in a body make it wait on issue N, as GitHub's own relations do
// (blockedBy, sub-issues: `gh api graphql`'s answer is read too); the
// body's task list ("- [ ] …") is its acceptance criteria; a label P0–P4
// or priority: high|medium|low (critical, urgent) sets its priority.
func parseGitHub(name string, data []byte) (*Plan, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' && !gjson.ValidBytes(t) {
		return parseGitHubLines(name, data)
	}
	issues, err := readIssues(name, data)
	if err != nil {
		return nil, err
	}
	return githubPlan(issues), nil
}

// parseGitHubLines reads one issue a line, as `gh issue list --json …
// --jq '.[]'` writes them.
func parseGitHubLines(name string, data []byte) (*Plan, error) {
	var issues []ghIssue
	for n, line := range lines(data) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !gjson.Valid(line) {
			return nil, bad(name, fmt.Sprintf("line %d", n+1), "not valid JSON (each line is one issue)")
		}
		one, err := readIssues(name, []byte(line))
		if err != nil {
			var fe *failure.Error
			if errors.As(err, &fe) {
				fe.Message = strings.Replace(fe.Message, name+": issue", fmt.Sprintf("%s: line %d", name, n+1), 1)
			}
			return nil, err
		}
		for i := range one {
			one[i].it.line, one[i].it.inLine, one[i].where = n, true, fmt.Sprintf("line %d", n+1)
		}
		issues = append(issues, one...)
	}
	return githubPlan(issues), nil
}

// ghIssue is an issue as read, before its source is known: that depends
// on the repositories of the whole file.
type ghIssue struct {
	it     Item
	number int64
	repo   string      // "OWNER/REPO" as the file gives it, "" when it does not say
	refs   []issueLink // the issues it waits on: its body's, and GitHub's blockedBy and subIssues
	before []issueLink // the issues that wait on it: GitHub's blocking, and its parent
	said   []string    // its priority labels, when they disagree
	pull   bool        // a pull request, which is skipped
	closed string      // why it was closed when not done: as not planned, as a duplicate
	where  string      // where it is in the file, for a note
}

// readIssues reads data, a list of issues or one issue (`gh issue view N
// --json …`).
func readIssues(name string, data []byte) ([]ghIssue, error) {
	doc, err := jsonDoc(name, data)
	if err != nil {
		return nil, err
	}
	issues, paths, graphQL := graphQLIssues(doc)
	whole := false
	switch {
	case graphQL:
	case doc.IsObject() && doc.Get("number").Exists():
		issues, whole = []gjson.Result{doc}, true // `gh issue view N --json …`
	case doc.IsArray():
		issues = doc.Array()
	default:
		return nil, bad(name, "", "`gh issue list --json …` writes a JSON list of issues, got %s", kindOf(doc))
	}
	r := &reader{name: name}
	var out []ghIssue
	for i, v := range issues {
		where, at := fmt.Sprintf("[%d]", i), fmt.Sprint(i)
		switch {
		case whole:
			where, at = "issue", ""
		case graphQL:
			where, at = paths[i], paths[i]
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
		is := ghIssue{number: int64(num.Num), repo: issueRepo(v), refs: bodyDeps(body), where: where,
			// GitHub's REST API (`gh api repos/O/R/issues`) lists pull
			// requests among the issues.
			pull: v.Get("pull_request").IsObject() || v.Get("isPullRequest").Bool(),
			it: Item{Title: oneLine(title), Description: strings.TrimSpace(body), Priority: "P1",
				Done: strings.EqualFold(state, "closed"), DependsOn: []string{}, at: at}}
		if state == "open" || state == "closed" {
			is.it.mark = "lower" // GitHub's REST API writes the state in lower case
		}
		// An issue closed as not planned or as a duplicate of another
		// (gh's stateReason, the REST API's state_reason) was not done:
		// it is skipped, as a cancelled Taskmaster task is.
		if is.it.Done {
			reason := v.Get("stateReason").String() + v.Get("state_reason").String()
			switch strings.ToLower(reason) {
			case "not_planned":
				is.closed = "closed as not planned"
			case "duplicate":
				is.closed = "closed as a duplicate"
			}
		}
		// GitHub's own relations (`gh api graphql`'s blockedBy, blocking,
		// parent and subIssues; the REST API's parent_issue_url): a
		// parent is done when its sub-issues are, as a body's task list
		// of issues says.
		is.refs = append(is.refs, issueLinks(v.Get("blockedBy"))...)
		is.refs = append(is.refs, issueLinks(v.Get("subIssues"))...)
		is.before = append(is.before, issueLinks(v.Get("blocking"))...)
		is.before = append(is.before, issueLinks(v.Get("parent"))...)
		if u := v.Get("parent_issue_url").Str; repoOf(u) != "" {
			if n := u[strings.LastIndexByte(u, '/')+1:]; n != "" && strings.Trim(n, "0123456789") == "" {
				is.before = append(is.before, issueLink{number: n, url: u})
			}
		}
		labels := v.Get("labels")
		if labels.IsObject() && labels.Get("nodes").IsArray() {
			labels = labels.Get("nodes") // GraphQL's connection
		}
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
			if pr, ok := tagPriority(label); ok {
				if len(said) == 0 || pr < is.it.Priority {
					is.it.Priority = pr // the most urgent label wins
				}
				said = append(said, label)
				differ[pr] = true
			}
		}
		if len(differ) > 1 {
			is.said = said
		}
		// A repository without priority labels often says it in the
		// title's first brackets ("[LOW] Add a dark theme", "[P1] …").
		if len(said) == 0 {
			if inner, ok := bracketed(title); ok {
				if pr, ok := tagPriority(inner); ok {
					is.it.Priority = pr
				}
			}
		}
		for _, l := range lines([]byte(body)) {
			if c := checkbox(l); c != nil {
				is.it.Acceptance = append(is.it.Acceptance, c.text)
			}
		}
		out = append(out, is)
	}
	return out, nil
}

// githubPlan gives the issues their sources and dependencies. An issue is
// github:#N, as it always was, so the tasks of earlier imports are found;
// in a file of several repositories' issues (gathered by a script, `gh
// search issues`), where one number is several issues, an issue whose
// repository the file says is github:OWNER/REPO#N. A number still written
// twice is told apart as other formats' ids are ("#N~2"), unless it is the
// same issue twice (a file appended to), read from its later entry.
func githubPlan(issues []ghIssue) *Plan {
	spelt := map[string]string{} // each repository as first written, by its lower case
	for _, is := range issues {
		if k := strings.ToLower(is.repo); is.repo != "" && spelt[k] == "" {
			spelt[k] = is.repo
		}
	}
	waitBack(issues, len(spelt) > 1)
	// gh and the REST API list a repository's newest issue first, an
	// order no one chose: its issues take their task ids as they were
	// filed, oldest first, so the work among issues of one priority
	// begins where the project did. A file of several repositories'
	// issues (a script's, a search's) keeps its order: their numbers do
	// not compare. Stable: an issue written twice keeps its entries'
	// order.
	if len(spelt) < 2 {
		slices.SortStableFunc(issues, func(a, b ghIssue) int { return cmp.Compare(a.number, b.number) })
	}
	source := func(repo, number string) string {
		if len(spelt) > 1 && repo != "" {
			return fmt.Sprintf("%s:%s#%s", GitHub, spelt[strings.ToLower(repo)], number)
		}
		return GitHub + ":#" + number
	}
	p := &Plan{}
	for i := range issues {
		is := &issues[i]
		is.it.Source = source(is.repo, strconv.FormatInt(is.number, 10))
	}
	// An issue is read from its last entry, and numbered ("~2") by its
	// first, so appending an issue again renames none.
	last := map[string]int{}
	nth := map[string]int{}
	count := map[string]int{}
	for i, is := range issues {
		same := is.it.Source + "\x00" + is.it.Title + "\x00" + is.it.Description
		last[same] = i
		if nth[same] == 0 {
			count[is.it.Source]++
			nth[same] = count[is.it.Source]
		}
	}
	for i := range issues {
		is := &issues[i]
		same := is.it.Source + "\x00" + is.it.Title + "\x00" + is.it.Description
		first := is.it.Source
		if n := nth[same]; n > 1 {
			is.it.Source = fmt.Sprintf("%s~%d", first, n)
		}
		if later := last[same]; later != i {
			p.Notes = append(p.Notes, fmt.Sprintf("%s is written twice, at %s and %s: the later is read", is.it.Source, is.where, issues[later].where))
			continue
		}
		if is.it.Source != first {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: the number is written more than once (issues of several repositories, without their `url`?): the issue at %s, %q, is %s",
				first, is.where, is.it.Title, is.it.Source))
		}
		if is.said != nil {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: its labels give more than one priority (%s): it takes the most urgent, %s", is.it.Source, strings.Join(is.said, ", "), is.it.Priority))
		}
		for _, ref := range is.refs {
			repo := is.repo
			if other := repoOf(ref.url); ref.url != "" && is.repo != "" && !strings.EqualFold(other, is.repo) {
				if len(spelt) < 2 || spelt[strings.ToLower(other)] == "" {
					p.Notes = append(p.Notes, fmt.Sprintf("%s depends on %s, an issue of another repository: that dependency is left out", is.it.Source, ref.url))
					continue
				}
				repo = other // an issue of another repository of the file
			}
			if dep := source(repo, ref.number); !slices.Contains(is.it.DependsOn, dep) {
				is.it.DependsOn = append(is.it.DependsOn, dep)
			}
		}
		if is.pull {
			p.Skipped = append(p.Skipped, Skipped{Source: is.it.Source, Title: is.it.Title, Why: "a pull request, not an issue"})
			continue
		}
		if is.closed != "" {
			p.Skipped = append(p.Skipped, Skipped{Source: is.it.Source, Title: is.it.Title, Why: is.closed + ", not done"})
			continue
		}
		p.Items = append(p.Items, is.it)
	}
	return p
}

// issueLink is an issue a body names: its number, and the URL it was
// written as ("" for "#N").
type issueLink struct{ number, url string }

// issueLinks reads one of GitHub's relations of an issue: an issue
// (`parent`), a list of them, or GraphQL's connection of them
// (`blockedBy { nodes { number url } }`), each known by its number, and
// its repository by its url or repository.nameWithOwner where given.
func issueLinks(v gjson.Result) []issueLink {
	if v.IsObject() && v.Get("nodes").IsArray() {
		v = v.Get("nodes")
	}
	var out []issueLink
	for _, n := range v.Array() { // one issue (a parent) is a list of one
		num := n
		if n.IsObject() {
			num = n.Get("number")
		}
		if num.Type != gjson.Number || num.Num != float64(int64(num.Num)) || num.Num < 1 {
			continue
		}
		link := issueLink{number: strconv.FormatInt(int64(num.Num), 10)}
		if r := issueRepo(n); r != "" {
			link.url = "https://github.com/" + r + "/issues/" + link.number
		}
		out = append(out, link)
	}
	return out
}

// waitBack turns the links that say another issue waits on this one
// (`blocking`, `parent`) into that issue's own, where the file has it:
// an issue not in the file is not imported, and has nothing to wait on.
// several says the file holds issues of more than one repository.
func waitBack(issues []ghIssue, several bool) {
	byNumber := map[string][]int{}
	for i, is := range issues {
		n := strconv.FormatInt(is.number, 10)
		byNumber[n] = append(byNumber[n], i)
	}
	for i := range issues {
		is := &issues[i]
		self := issueLink{number: strconv.FormatInt(is.number, 10)}
		if is.repo != "" {
			self.url = "https://github.com/" + is.repo + "/issues/" + self.number
		}
		for _, ref := range is.before {
			repo := is.repo
			if r := repoOf(ref.url); r != "" {
				repo = r
			}
			for _, j := range byNumber[ref.number] {
				w := &issues[j]
				if same := strings.EqualFold(w.repo, repo) || !several && (w.repo == "" || repo == ""); j != i && same {
					w.refs = append(w.refs, self)
				}
			}
		}
	}
}

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

// graphQLIssues finds the issues in the answer of `gh api graphql`
// ({"data": …}), and the path of each in it (where an export marks it): a
// repository's issues (repository.issues.nodes), a search's (search.nodes:
// its pull requests and other nodes, which carry no number, are left out),
// or one issue (repository.issue) with its sub-issues when the query asked
// for them whole (subIssues.nodes with their titles: an epic and its
// parts). ok is false for any other document.
func graphQLIssues(doc gjson.Result) (issues []gjson.Result, paths []string, ok bool) {
	data := doc.Get("data")
	if !doc.IsObject() || !data.IsObject() {
		return nil, nil, false
	}
	take := func(v gjson.Result, path string) {
		if v.IsObject() && v.Get("number").Exists() {
			issues, paths = append(issues, v), append(paths, path)
		}
	}
	list := func(path string, whole bool) {
		for i, v := range doc.Get(path).Array() {
			if whole || v.Get("title").Exists() {
				take(v, fmt.Sprintf("%s.%d", path, i))
			}
		}
	}
	switch one := "data.repository.issue"; {
	case doc.Get("data.repository.issues.nodes").IsArray():
		list("data.repository.issues.nodes", true)
	case doc.Get("data.search.nodes").IsArray():
		list("data.search.nodes", true)
	case doc.Get(one).IsObject():
		take(doc.Get(one), one)
		list(one+".subIssues.nodes", false)
	default:
		return nil, nil, false
	}
	return issues, paths, true
}

// issueRepo is the repository an issue is of, "OWNER/REPO", as the file
// says it: gh's `url`, the REST API's `html_url` and `repository_url`,
// `gh search issues`' `repository.nameWithOwner`, a repository object's
// `full_name`, or a `repo` (`repository`) member holding its name or URL;
// "" when none does.
func issueRepo(v gjson.Result) string {
	for _, k := range []string{"url", "html_url", "repository_url"} {
		if r := repoOf(v.Get(k).Str); r != "" {
			return r
		}
	}
	for _, k := range []string{"repository.nameWithOwner", "repository.full_name", "repository", "repo"} {
		if s := v.Get(k); s.Type == gjson.String {
			if r := repoOf(s.Str); r != "" {
				return r
			}
			if ownerRepo().MatchString(strings.TrimSpace(s.Str)) {
				return strings.TrimSpace(s.Str)
			}
		}
	}
	return ""
}

// repoOf is "OWNER/REPO" of a URL of GitHub's, an issue's, a repository's
// or the REST API's (https://api.github.com/repos/OWNER/REPO/…), as
// written; "" for anything else.
func repoOf(url string) string {
	rest, ok := strings.CutPrefix(strings.TrimSpace(url), "https://github.com/")
	if !ok {
		if rest, ok = strings.CutPrefix(strings.TrimSpace(url), "https://api.github.com/repos/"); !ok {
			return ""
		}
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

// bracketed is what a title's first brackets hold ("LOW" of "[LOW] Add
// a dark theme").
func bracketed(title string) (string, bool) {
	rest, ok := strings.CutPrefix(title, "[")
	if !ok {
		return "", false
	}
	inner, _, ok := strings.Cut(rest, "]")
	return strings.TrimSpace(inner), ok
}

// tagPriority is the priority a label or a tag says ("P3", "priority:
// high", "medium-priority": priorityTag's words), false when it says none.
func tagPriority(tag string) (string, bool) {
	m := priorityTag().FindStringSubmatch(strings.TrimSpace(tag))
	if m == nil {
		return "", false
	}
	switch strings.ToLower(m[1]) {
	case "p0", "critical", "urgent", "high":
		return "P0", true
	case "p1", "medium", "normal":
		return "P1", true
	}
	return "P2", true
}
