// Package plan reads the plans people keep in other tools (Anthropic's
// feature list, Taskmaster, Beads, GitHub issues, Cursor's plans, a
// Markdown checklist) as items the harness can hold as tasks, and writes
// the harness's progress back into them.
//
// Each item keeps the id the source gave it, as a Source ("beads:bd-a1b2"):
// a second import of the same file finds its tasks by it, and an export
// finds the item to mark done. Writing back patches only the status of an
// item in the person's own file (Patch), so a file whose items the harness
// did not complete comes back byte for byte.
package plan

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/failure"
)

// The formats, by the names --format takes.
const (
	FeatureList = "feature-list"
	Taskmaster  = "taskmaster"
	Beads       = "beads"
	GitHub      = "github"
	Cursor      = "cursor"
	Backlog     = "backlog"
	Markdown    = "markdown"
)

// Formats lists every format, in the order help names them.
var Formats = []string{FeatureList, Taskmaster, Beads, GitHub, Markdown, Cursor, Backlog}

// Item is one task of a plan as the harness holds it.
type Item struct {
	Source      string // the format and the item's id in it: "taskmaster:master/3"
	Title       string
	Description string
	Acceptance  []string // what a person checks: steps, testStrategy, acceptance_criteria, a task list
	Priority    string   // P0, P1 or P2
	DependsOn   []string // the Sources of the items it waits on
	Done        bool     // done in the source (passes, done, closed, [x])

	at       string   // where the item is in a JSON file: a gjson path
	line     int      // where it is in a file of lines (Beads, Markdown; Cursor, Backlog: its status): 0-based
	col      int      // where its status is on that line (Cursor, Backlog): 0-based
	file     int      // which of a directory's files it is in (Backlog)
	inLine   bool     // a JSON object alone on its line: at is "" and line says where
	parts    []string // the Sources of its subtasks, children, nested items: some of DependsOn
	fileOpen bool     // not done in the file though done in the plan read (a subtask of a done Taskmaster task)
	fileDone bool     // done in the file though not in the plan read (a closed epic with open children)
	mark     string   // how the file says done where it has a choice: a feature list's "status" or "state" (not passes), GitHub's "lower" case state
}

// Skipped is an item of the file the harness does not take.
type Skipped struct {
	Source, Title, Why string
}

// Plan is a parsed plan file.
type Plan struct {
	Format  string
	Items   []Item
	Skipped []Skipped
	Notes   []string // what the reader made of a file written oddly, for the person to check
	Tags    []string // Taskmaster's tags, in the file's order
}

// ErrFormat is wrapped by every error about a file's content.
var ErrFormat = errors.New("not a plan the harness reads")

// bad is the error for a file that is not what its format says: it names
// the file and where in it, and nothing is imported.
func bad(name, where, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if where != "" {
		msg = where + ": " + msg
	}
	return &failure.Error{Category: failure.Config, Message: name + ": " + msg, Cause: ErrFormat}
}

// Detect names the format of the file called name holding data: by its
// name where that says (.jsonl, .md), else by its content.
func Detect(name string, data []byte) (string, error) {
	data, _ = decode(data)
	base := strings.ToLower(filepath.Base(name))
	switch ext := filepath.Ext(base); {
	case ext == ".jsonl" || filepath.Base(filepath.Dir(name)) == ".beads":
		return linesFormat(data), nil
	case ext == ".md" || ext == ".markdown":
		if isCursorPlan(data) {
			return Cursor, nil
		}
		if isBacklogTask(data) {
			return Backlog, nil
		}
		return Markdown, nil
	}
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return "", bad(name, "", "the file is empty")
	case trimmed[0] == '[':
		first := gjson.GetBytes(trimmed, "0")
		switch {
		case first.Get("number").Exists():
			return GitHub, nil
		case first.Get("id").Type == gjson.String && (first.Get("issue_type").Exists() || first.Get("status").Exists() && first.Get("created_at").Exists()):
			return Beads, nil // `bd list --json`
		case first.Get("passes").Exists() || first.Get("steps").Exists() || first.Get("description").Exists():
			return FeatureList, nil
		}
	case trimmed[0] == '{':
		if gjson.ValidBytes(trimmed) {
			doc := gjson.ParseBytes(trimmed)
			if wrappedFeatures(doc) != "" {
				return FeatureList, nil
			}
			if doc.Get("tasks").IsArray() {
				return Taskmaster, nil
			}
			tagged := false
			doc.ForEach(func(_, v gjson.Result) bool {
				tagged = v.Get("tasks").IsArray()
				return !tagged
			})
			if tagged {
				return Taskmaster, nil
			}
			if doc.Get("number").Exists() && doc.Get("title").Exists() {
				return GitHub, nil // `gh issue view N --json …`
			}
			if issues, _, ok := graphQLIssues(doc); ok && len(issues) > 0 {
				return GitHub, nil // `gh api graphql …`
			}
			if doc.Get("id").Exists() && doc.Get("title").Exists() {
				return Beads, nil // a file of one issue
			}
		} else if lines := bytes.Split(trimmed, []byte("\n")); len(lines) > 0 && gjson.ValidBytes(bytes.TrimSpace(lines[0])) {
			return linesFormat(data), nil
		}
	case isCursorPlan(trimmed):
		return Cursor, nil
	default:
		// A checklist under a heading or a paragraph (TODO.txt, ROADMAP).
		for _, l := range lines(trimmed) {
			if checkbox(l) != nil {
				return Markdown, nil
			}
		}
	}
	if len(trimmed) > 0 && (trimmed[0] == '[' || trimmed[0] == '{') && !gjson.ValidBytes(trimmed) {
		// JSON that does not parse (a file cut short, a comma too many):
		// say where, not only that the format is unknown.
		_, err := jsonDoc(name, data)
		var fe *failure.Error
		if errors.As(err, &fe) {
			fe.Message += "; so which plan format it is cannot be told"
			fe.Hint = "fix the file (cut short?), or name its format with --format " + strings.Join(Formats, "|")
		}
		return "", err
	}
	return "", &failure.Error{Category: failure.Config, Cause: ErrFormat,
		Message: fmt.Sprintf("%s: cannot tell which plan format it is", name),
		Hint:    "name it with --format " + strings.Join(Formats, "|")}
}

// linesFormat names the format of a file of one JSON object a line:
// Beads', or GitHub issues as `gh issue list --json … --jq '.[]'` writes
// them (an issue has a number, a Beads issue never).
func linesFormat(data []byte) string {
	for _, l := range bytes.Split(data, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			if first := gjson.ParseBytes(l); first.Get("number").Exists() && !first.Get("issue_type").Exists() {
				return GitHub
			}
			return Beads
		}
	}
	return Beads
}

// Parse reads data, the file called name, as a plan of format.
func Parse(format, name string, data []byte) (*Plan, error) {
	return ParseBeside(format, name, data, nil)
}

// Beside reads a file next to the plan file, by its base name; nil when
// there is none. A Beads backup (`.beads/backup/issues.jsonl`) keeps its
// dependencies in dependencies.jsonl beside the issues.
type Beside func(name string) []byte

// ParseBeside is Parse, with the files beside the plan file at hand.
func ParseBeside(format, name string, data []byte, beside Beside) (*Plan, error) {
	text, enc := decode(data)
	if i := bytes.IndexByte(text, 0); i >= 0 {
		// No text holds one; read around it, a file would be read one way
		// and, once an export changed its length, another (UTF-16 without
		// its mark is told by its zero bytes).
		return nil, bad(name, "", "holds a NUL byte (at byte %d): not a text file (UTF-16 without its byte-order mark? save it as UTF-8)", i)
	}
	p, err := parse(format, name, text, beside)
	var fe *failure.Error
	if err == nil || !errors.As(err, &fe) {
		return p, err
	}
	if enc.name != utf8Plain.name {
		fe.Message += " (read as " + enc.name + ")"
	}
	// A file of another format read as this one: say which it is.
	if other, derr := Detect(name, data); derr == nil && other != format && fe.Hint == "" {
		if _, perr := parse(other, name, text, nil); perr == nil {
			fe.Message += fmt.Sprintf("; it reads as a %s file", other)
			fe.Hint = "--format " + other
		}
	}
	return p, err
}

// parse reads text, UTF-8 without a byte-order mark, as a plan of format.
func parse(format, name string, data []byte, beside Beside) (*Plan, error) {
	var p *Plan
	var err error
	switch format {
	case FeatureList:
		p, err = parseFeatureList(name, data)
	case Taskmaster:
		p, err = parseTaskmaster(name, data)
	case Beads:
		p, err = parseBeads(name, data, beside)
	case GitHub:
		p, err = parseGitHub(name, data)
	case Cursor:
		p, err = parseCursor(name, data)
	case Backlog:
		// One task file of a Backlog.md directory (the directory whole:
		// ParseBacklog).
		p, err = parseBacklog(path.Dir(filepath.ToSlash(name)), nil, []File{{Name: path.Base(filepath.ToSlash(name)), Data: data}})
	case Markdown:
		p, err = parseMarkdown(name, data)
	default:
		return nil, &failure.Error{Category: failure.Usage, Message: fmt.Sprintf("unknown plan format %q", format),
			Hint: "--format takes " + strings.Join(Formats, "|")}
	}
	if err != nil {
		return nil, err
	}
	p.Format = format
	p.openParts()
	return p, nil
}

// openParts makes an item done in the file while one of its parts is not
// (a closed epic with an open child, a ticked item over an unticked one)
// not done, and says so: its task waits on its parts, and is done when
// they are.
func (p *Plan) openParts() {
	at := map[string]int{}
	for i, it := range p.Items {
		at[it.Source] = i
	}
	for changed := true; changed; {
		changed = false
		for i := range p.Items {
			it := &p.Items[i]
			if !it.Done {
				continue
			}
			var open []string
			for _, s := range it.parts {
				if j, ok := at[s]; ok && !p.Items[j].Done {
					open = append(open, s)
				}
			}
			if len(open) > 0 {
				it.Done, it.fileDone, changed = false, true, true
				p.Notes = append(p.Notes, fmt.Sprintf("%s is done in the file while its parts %s are not: imported as not done, waiting on them",
					it.Source, strings.Join(open, ", ")))
			}
		}
	}
}

// jsonDoc checks data is one JSON value and returns it; a syntax error
// names its line.
func jsonDoc(name string, data []byte) (gjson.Result, error) {
	if !gjson.ValidBytes(data) {
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return gjson.Result{}, bad(name, fmt.Sprintf("line %d", lineOf(data, int(se.Offset))), "not valid JSON: %v", se)
		}
		return gjson.Result{}, bad(name, "", "not valid JSON")
	}
	return gjson.ParseBytes(data), nil
}

// lineOf is the 1-based line of byte offset off in data.
func lineOf(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// field reads a member that must be a string when present.
type reader struct {
	name string
	err  error
}

func (r *reader) str(v gjson.Result, where string) string {
	if r.err != nil || !v.Exists() || v.Type == gjson.Null {
		return ""
	}
	if v.Type != gjson.String {
		r.err = bad(r.name, where, "must be a string, got %s", v.Raw)
		return ""
	}
	return v.Str
}

func (r *reader) strs(v gjson.Result, where string) []string {
	if r.err != nil || !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		r.err = bad(r.name, where, "must be a list of strings, got %s", v.Raw)
		return nil
	}
	var out []string
	for i, e := range v.Array() {
		if e.Type != gjson.String {
			r.err = bad(r.name, fmt.Sprintf("%s[%d]", where, i), "must be a string, got %s", e.Raw)
			return nil
		}
		if s := strings.TrimSpace(e.Str); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// shortHash is the first 12 hex digits of the SHA-256 of s: the id of an
// item its format gives none (a feature, a checklist line).
func shortHash(s string) string {
	sum := digest.SHA256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// uniqueSources makes the Sources of items of the same text distinct: the
// second is "…~2", in file order.
func uniqueSources(items []Item) {
	seen := map[string]int{}
	for i := range items {
		s := items[i].Source
		seen[s]++
		if n := seen[s]; n > 1 {
			items[i].Source = fmt.Sprintf("%s~%d", s, n)
		}
	}
}

// lines splits text into its lines (without their endings, a "\r" kept
// off), 1-based by index+1.
func lines(data []byte) []string {
	out := strings.Split(string(data), "\n")
	for i, l := range out {
		out[i] = strings.TrimSuffix(l, "\r")
	}
	return out
}

// gjsonKey escapes a member name for a gjson path.
func gjsonKey(k string) string {
	var b strings.Builder
	for _, c := range k {
		switch c {
		case '.', '*', '?', '\\', '|', '#', '@', '!', '=', '<', '>', '%':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// OnlyTag keeps of a Taskmaster plan the items of one tag: the one the
// person works in, the others being other branches' or experiments'.
func (p *Plan) OnlyTag(tag string) error {
	if p.Format != Taskmaster {
		return failure.New(failure.Usage, "--tag picks one of a Taskmaster file's tags; a %s file has none", p.Format)
	}
	found := false
	for _, t := range p.Tags {
		found = found || t == tag
	}
	if !found {
		return failure.New(failure.Usage, "the file has no tag %q", tag).WithHint("its tags: %s", strings.Join(p.Tags, ", "))
	}
	prefix := Taskmaster + ":" + tag + "/"
	var items []Item
	for _, it := range p.Items {
		if strings.HasPrefix(it.Source, prefix) {
			items = append(items, it)
		}
	}
	var skipped []Skipped
	for _, s := range p.Skipped {
		if strings.HasPrefix(s.Source, prefix) {
			skipped = append(skipped, s)
		}
	}
	p.Items, p.Skipped, p.Tags = items, skipped, []string{tag}
	return nil
}
