package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/jsondepth"
	"github.com/harness-agent/harness/internal/jsonedit"
)

// Change is one edit made (or, in a dry run, to be made) to a settings file.
type Change struct {
	Op      string // "add", "update" or "remove"
	Event   string
	Command string // the entry's command (after the change, for updates)
	Detail  string // what changed, for updates and removals
}

// The operations of a Change.
const (
	Add    = "add"
	Update = "update"
	Remove = "remove"
)

// EventWidth is the width of the longest hook event's name: the column the
// tables of hooks align on.
func EventWidth() int {
	w := 0
	for _, h := range Hooks {
		w = max(w, len(h.Event))
	}
	return w
}

func (c Change) String() string {
	mark := map[string]string{Add: "+", Update: "~", Remove: "-"}[c.Op]
	s := fmt.Sprintf("%s %-*s %s", mark, EventWidth(), c.Event, c.Command)
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	return s
}

// Entry is one of our hook entries as found in a settings file.
type Entry struct {
	Event   string
	Matcher string // the matcher group's matcher; "" when it has none
	Command string
	Program string
	Type    string
	Timeout int // 0 when unset

	hasMatcher bool
	hasTimeout bool
	hasArgs    bool // "args" is there: Claude Code runs the command without a shell
	argsEmpty  bool // and it is an empty list
	group      int  // index of the matcher group in hooks.<Event>
	index      int  // index of the entry in the group's hooks
	groupSize  int  // entries in the group, ours or not
}

func (e Entry) groupPath() string {
	return "hooks." + gjson.Escape(e.Event) + "." + strconv.Itoa(e.group)
}

func (e Entry) path() string { return e.groupPath() + ".hooks." + strconv.Itoa(e.index) }

// matcherGroup and hookEntry are the JSON written for a new registration.
type matcherGroup struct {
	Matcher string      `json:"matcher,omitempty"`
	Hooks   []hookEntry `json:"hooks"`
}

type hookEntry struct {
	Type    string    `json:"type"`
	Command string    `json:"command"`
	Args    *[]string `json:"args,omitempty"` // [] for the exec form (ExecForm)
	Timeout int       `json:"timeout,omitempty"`
}

// Parse checks that doc is a settings document the harness may edit and
// returns our entries in it. An empty document counts as {}.
func Parse(doc []byte, path string) ([]Entry, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil
	}
	if err := validate(doc, path); err != nil {
		return nil, err
	}
	return scan(doc, path)
}

// validate refuses anything but one JSON object, with the place of the first
// syntax error: Claude Code cannot read such a file either, and guessing what
// the user meant would risk their settings.
func validate(doc []byte, path string) error {
	// The depth bound comes first: a hand-edited file nested millions of
	// levels deep gets the same refusal as any other unreadable one.
	if jsondepth.Exceeds(doc, jsondepth.Max) {
		return failure.New(failure.Config, "%s is not valid JSON: it nests deeper than %d levels", path, jsondepth.Max).
			WithHint("fix it (Claude Code cannot read it either) or move it away, then re-run; it was left as it was")
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	err := dec.Decode(&v)
	if err == nil && dec.More() {
		_, err = dec.Token()
		if err == nil {
			err = fmt.Errorf("unexpected data after the top-level value")
		}
	}
	if err == nil && !gjson.ValidBytes(doc) {
		err = fmt.Errorf("invalid JSON")
	}
	if err != nil {
		where := ""
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(doc, int(se.Offset))
			where = fmt.Sprintf(" (line %d, column %d)", line, col)
		}
		return failure.Wrap(failure.Config, err, "%s is not valid JSON: %v%s", path, err, where).
			WithHint("fix it (Claude Code cannot read it either) or move it away, then re-run; it was left as it was")
	}
	if _, ok := v.(map[string]any); !ok {
		return failure.New(failure.Config, "%s is not a JSON object", path).
			WithHint("a settings file is one {…} object; fix it or move it away, then re-run; it was left as it was")
	}
	return duplicateKeys(doc, path)
}

// duplicateKeys refuses a key written twice in an object the harness reads:
// the top level, "hooks", and the matcher groups and entries of each event.
// Claude Code keeps the last of the two, the harness (gjson) reads the first:
// our entries would go where Claude Code never looks, and `harness hooks
// status` would call them fine.
func duplicateKeys(doc []byte, path string) error {
	var err error
	check := func(obj gjson.Result, where string) bool {
		if err != nil || !obj.IsObject() {
			return err == nil
		}
		first := map[string]int{}
		obj.ForEach(func(k, _ gjson.Result) bool {
			at, dup := first[k.Str]
			if !dup {
				first[k.Str] = k.Index
				return true
			}
			line1, _ := position(doc, at)
			line2, _ := position(doc, k.Index)
			lines := fmt.Sprintf("lines %d and %d", line1, line2)
			if line1 == line2 {
				lines = fmt.Sprintf("line %d", line1)
			}
			err = failure.New(failure.Config, "%s: %q appears twice %s (%s), and Claude Code reads only the last one",
				path, k.Str, where, lines).
				WithHint("merge the two into one (an edit could land in the one Claude Code ignores), then re-run; the file was left as it was")
			return false
		})
		return err == nil
	}
	root := gjson.ParseBytes(doc)
	root.Index = bytes.IndexByte(doc, '{')
	if !check(root, "at the top level") {
		return err
	}
	hooks := root.Get("hooks")
	if !check(hooks, `in "hooks"`) || !hooks.IsObject() {
		return err
	}
	hooks.ForEach(func(event, groups gjson.Result) bool {
		gi := 0
		groups.ForEach(func(_, g gjson.Result) bool {
			where := fmt.Sprintf("hooks.%s[%d]", event.Str, gi)
			in := "in " + where
			if !check(g, in) {
				return false
			}
			hi := 0
			g.Get("hooks").ForEach(func(_, h gjson.Result) bool {
				ok := check(h, fmt.Sprintf("in %s.hooks[%d]", where, hi))
				hi++
				return ok
			})
			gi++
			return err == nil
		})
		return err == nil
	})
	return err
}

// position converts a byte offset into a 1-based line and column.
func position(doc []byte, offset int) (line, col int) {
	if offset > len(doc) {
		offset = len(doc)
	}
	before := doc[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = offset - (bytes.LastIndexByte(before, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return line, col
}

// scan finds our entries. A "hooks" that is not an object, or an event of
// ours that is not a list, is refused: editing it would mean guessing.
func scan(doc []byte, path string) ([]Entry, error) {
	hooks := gjson.GetBytes(doc, "hooks")
	if !hooks.Exists() {
		return nil, nil
	}
	if !hooks.IsObject() {
		return nil, shapeErr(path, "hooks", "must be an object")
	}
	var found []Entry
	var err error
	hooks.ForEach(func(event, groups gjson.Result) bool {
		if !groups.IsArray() {
			if isOurEvent(event.Str) {
				err = shapeErr(path, "hooks."+event.Str, "must be a list of matcher groups")
				return false
			}
			return true
		}
		gi := 0
		groups.ForEach(func(_, g gjson.Result) bool {
			entries := g.Get("hooks")
			size := len(entries.Array())
			hi := 0
			entries.ForEach(func(_, h gjson.Result) bool {
				cmd := h.Get("command")
				if cmd.Type == gjson.String && IsOurs(cmd.Str) {
					m, t := g.Get("matcher"), h.Get("timeout")
					timeout := -1 // present but not a number: Claude Code would reject it
					if t.Type == gjson.Number {
						timeout = int(t.Int())
					}
					args := h.Get("args")
					found = append(found, Entry{
						Event: event.Str, Matcher: m.String(), Command: cmd.Str, Program: Program(cmd.Str),
						Type: h.Get("type").String(), Timeout: timeout,
						hasMatcher: m.Exists(), hasTimeout: t.Exists(),
						hasArgs: args.Exists(), argsEmpty: args.IsArray() && len(args.Array()) == 0,
						group: gi, index: hi, groupSize: size,
					})
				}
				hi++
				return true
			})
			gi++
			return true
		})
		return true
	})
	return found, err
}

func isOurEvent(event string) bool {
	for _, h := range Hooks {
		if h.Event == event {
			return true
		}
	}
	return false
}

func shapeErr(path, field, what string) error {
	return failure.New(failure.Config, "%s: %s %s", path, field, what).
		WithHint("fix the field by hand (see the hooks section of the Claude Code settings docs), then re-run; the file was left as it was")
}

// newFile is what Register starts a missing or empty settings file from.
var newFile = []byte("{}\n")

// maxEdits bounds the edit loops; a settings file never needs more.
const maxEdits = 1000

// Register returns doc with every hook of Hooks registered to run its
// program from binDir, and the changes that took. Existing entries of ours
// are updated in place (command, matcher, timeout); duplicates and entries
// under the wrong event are removed; missing ones are added as new matcher
// groups at the end of their event's list.
func Register(doc []byte, binDir, path string) ([]byte, []Change, error) {
	if !filepath.IsAbs(binDir) {
		return nil, nil, failure.New(failure.Usage, "the bin directory %q is not an absolute path", binDir)
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = newFile
	}
	if err := validate(doc, path); err != nil {
		return nil, nil, err
	}
	var changes []Change
	for range maxEdits {
		found, err := scan(doc, path)
		if err != nil {
			return nil, nil, err
		}
		next, change, err := registerStep(doc, found, binDir)
		if err == nil && next != nil && !gjson.ValidBytes(next) {
			err = jsonedit.ErrLayout // never write what we could not read back
		}
		if err != nil {
			return nil, nil, failure.Wrap(failure.EnvSetup, err, "cannot edit %s: %v", path, err)
		}
		if next == nil {
			return doc, changes, nil
		}
		doc = next
		if change.Op != "" {
			changes = append(changes, change)
		}
	}
	return nil, nil, failure.New(failure.EnvSetup, "cannot edit %s: the edits do not settle", path)
}

// registerStep makes the first edit that brings doc closer to the wanted
// registrations, or returns nil when there is none left to make.
func registerStep(doc []byte, found []Entry, binDir string) ([]byte, Change, error) {
	seen := map[string]bool{}
	for _, e := range found {
		h := hookFor(e.Program)
		why := ""
		switch {
		case e.Event != h.Event:
			why = "a " + h.Event + " hook, not " + e.Event
		case seen[e.Program]:
			why = "duplicate"
		}
		if why != "" {
			next, err := removeEntry(doc, e)
			return next, Change{Op: Remove, Event: e.Event, Command: e.Command, Detail: why}, err
		}
		seen[e.Program] = true
	}
	for _, h := range Hooks {
		want := Command(binDir, h.Program)
		var e *Entry
		for i := range found {
			if found[i].Program == h.Program {
				e = &found[i]
			}
		}
		if e == nil {
			next, err := addEntry(doc, h, want)
			return next, Change{Op: Add, Event: h.Event, Command: want, Detail: describe(h)}, err
		}
		up := func(next []byte, err error, detail string) ([]byte, Change, error) {
			return next, Change{Op: Update, Event: h.Event, Command: want, Detail: detail}, err
		}
		switch {
		case !sameMatcher(h.Matcher, e.Matcher, e.hasMatcher) && e.groupSize > 1:
			// Our entry shares a group with the user's hooks: leave their
			// matcher alone and move ours into a group of its own.
			next, err := removeEntry(doc, *e)
			return next, Change{}, err
		case !sameMatcher(h.Matcher, e.Matcher, e.hasMatcher):
			detail := fmt.Sprintf("matcher %q → %q", e.Matcher, h.Matcher)
			switch {
			case h.Matcher == "":
				next, err := jsonedit.Remove(doc, e.groupPath()+".matcher")
				return up(next, err, detail)
			case e.hasMatcher:
				next, err := jsonedit.Replace(doc, e.groupPath()+".matcher", h.Matcher)
				return up(next, err, detail)
			default:
				next, err := jsonedit.Append(doc, e.groupPath(), "matcher", h.Matcher)
				return up(next, err, detail)
			}
		case e.Command != want:
			next, err := jsonedit.Replace(doc, e.path()+".command", want)
			if err == nil {
				next, err = setForm(next, *e, want)
			}
			return up(next, err, "was "+e.Command)
		case e.Type != "command":
			next, err := setMember(doc, e.path(), "type", gjson.GetBytes(doc, e.path()+".type").Exists(), "command")
			return up(next, err, fmt.Sprintf("type %q → \"command\"", e.Type))
		case e.Timeout != h.Timeout || !e.hasTimeout:
			next, err := setMember(doc, e.path(), "timeout", e.hasTimeout, h.Timeout)
			return up(next, err, fmt.Sprintf("timeout %s → %ds", timeoutText(*e), h.Timeout))
		case !inForm(*e, want):
			next, err := setForm(doc, *e, want)
			if ExecForm(want) {
				return up(next, err, "run without a shell")
			}
			return up(next, err, "run through the shell (its path needs quoting)")
		}
	}
	return nil, Change{}, nil
}

// inForm reports whether entry e has the form command wants: an empty
// "args" list for the exec form (ExecForm), none for the shell's.
func inForm(e Entry, command string) bool {
	if ExecForm(command) {
		return e.argsEmpty
	}
	return !e.hasArgs
}

// setForm gives entry e the form command wants.
func setForm(doc []byte, e Entry, command string) ([]byte, error) {
	switch {
	case inForm(e, command):
		return doc, nil
	case ExecForm(command):
		return setMember(doc, e.path(), "args", e.hasArgs, []string{})
	}
	return jsonedit.Remove(doc, e.path()+".args")
}

func setMember(doc []byte, obj, key string, exists bool, v any) ([]byte, error) {
	if exists {
		return jsonedit.Replace(doc, obj+"."+key, v)
	}
	return jsonedit.Append(doc, obj, key, v)
}

func timeoutText(e Entry) string {
	if !e.hasTimeout {
		return "unset"
	}
	if e.Timeout < 0 {
		return "not a number"
	}
	return strconv.Itoa(e.Timeout) + "s"
}

func describe(h Hook) string {
	if h.Matcher != "" {
		return fmt.Sprintf("matcher %q, timeout %ds", h.Matcher, h.Timeout)
	}
	return fmt.Sprintf("timeout %ds", h.Timeout)
}

// sameMatcher compares matchers the way Claude Code reads them: no matcher,
// "" and "*" all match everything.
func sameMatcher(want, got string, has bool) bool {
	norm := func(m string) string {
		if m == "" {
			return "*"
		}
		return m
	}
	if !has {
		got = ""
	}
	return norm(want) == norm(got)
}

// addEntry appends a matcher group holding only our entry to the event's
// list, creating the list and the "hooks" object as needed.
func addEntry(doc []byte, h Hook, command string) ([]byte, error) {
	entry := hookEntry{Type: "command", Command: command, Timeout: h.Timeout}
	if ExecForm(command) {
		entry.Args = &[]string{}
	}
	group := matcherGroup{Matcher: h.Matcher, Hooks: []hookEntry{entry}}
	if !gjson.GetBytes(doc, "hooks").Exists() {
		return jsonedit.Append(doc, "", "hooks", map[string][]matcherGroup{h.Event: {group}})
	}
	list := "hooks." + gjson.Escape(h.Event)
	if !gjson.GetBytes(doc, list).Exists() {
		return jsonedit.Append(doc, "hooks", h.Event, []matcherGroup{group})
	}
	return jsonedit.Append(doc, list, "", group)
}

// removeEntry removes entry e, then whatever it leaves empty: its matcher
// group, its event's list and the "hooks" object, all of which were added
// with it.
func removeEntry(doc []byte, e Entry) ([]byte, error) {
	event := "hooks." + gjson.Escape(e.Event)
	switch {
	case e.groupSize > 1:
		return jsonedit.Remove(doc, e.path())
	case len(gjson.GetBytes(doc, event).Array()) > 1:
		return jsonedit.Remove(doc, e.groupPath())
	case len(gjson.GetBytes(doc, "hooks").Map()) > 1:
		return jsonedit.Remove(doc, event)
	}
	return jsonedit.Remove(doc, "hooks")
}

// Unregister returns doc without any of our entries, and the removals. A
// document without them is returned as it is, byte for byte.
func Unregister(doc []byte, path string) ([]byte, []Change, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return doc, nil, nil
	}
	if err := validate(doc, path); err != nil {
		return nil, nil, err
	}
	var changes []Change
	for range maxEdits {
		found, err := scan(doc, path)
		if err != nil {
			return nil, nil, err
		}
		if len(found) == 0 {
			return doc, changes, nil
		}
		e := found[0]
		if doc, err = removeEntry(doc, e); err == nil && !gjson.ValidBytes(doc) {
			err = jsonedit.ErrLayout // never write what we could not read back
		}
		if err != nil {
			return nil, nil, failure.Wrap(failure.EnvSetup, err, "cannot edit %s: %v", path, err)
		}
		changes = append(changes, Change{Op: Remove, Event: e.Event, Command: e.Command})
	}
	return nil, nil, failure.New(failure.EnvSetup, "cannot edit %s: the edits do not settle", path)
}

// Finding is the state of one hook's registration.
type Finding struct {
	Hook     Hook
	Entries  []Entry  // our entries running this hook's program, anywhere
	Problems []string // empty when the hook is registered as it should be
}

// Check reports, for each hook, whether doc registers it as Register would.
// With binDir "" any directory will do, as long as the program there is an
// executable file.
func Check(doc []byte, binDir, path string) ([]Finding, error) {
	found, err := Parse(doc, path)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, h := range Hooks {
		f := Finding{Hook: h}
		for _, e := range found {
			if e.Program == h.Program {
				f.Entries = append(f.Entries, e)
			}
		}
		switch len(f.Entries) {
		case 0:
			f.Problems = append(f.Problems, "not registered")
		case 1:
		default:
			f.Problems = append(f.Problems, fmt.Sprintf("registered %d times", len(f.Entries)))
		}
		for _, e := range f.Entries {
			if e.Event != h.Event {
				f.Problems = append(f.Problems, "registered under "+e.Event)
				continue
			}
			if !sameMatcher(h.Matcher, e.Matcher, e.hasMatcher) {
				f.Problems = append(f.Problems, fmt.Sprintf("matcher %q, want %q", e.Matcher, h.Matcher))
			}
			if e.Timeout != h.Timeout || !e.hasTimeout {
				f.Problems = append(f.Problems, fmt.Sprintf("timeout %s, want %ds", timeoutText(e), h.Timeout))
			}
			if e.Type != "command" {
				f.Problems = append(f.Problems, fmt.Sprintf("type %q, want \"command\"", e.Type))
			}
			if e.hasArgs && !ExecForm(e.Command) {
				f.Problems = append(f.Problems, "\"args\" has Claude Code run it without the shell its command needs")
			}
			if binDir != "" && e.Command != Command(binDir, h.Program) {
				f.Problems = append(f.Problems, "want "+Command(binDir, h.Program))
			}
			if p := firstWord(e.Command); !filepath.IsAbs(p) {
				f.Problems = append(f.Problems, "the command is not an absolute path")
			} else if !executable(p) {
				f.Problems = append(f.Problems, p+" is missing or not executable")
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// executable reports whether path is an executable file (on Windows,
// path.exe, whose mode has no execute bits).
func executable(path string) bool {
	if runtime.GOOS == "windows" {
		fi, err := os.Stat(strings.TrimSuffix(path, ".exe") + ".exe")
		return err == nil && fi.Mode().IsRegular()
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Dirs returns the directories our entries in doc run their executables
// from, each once, in the order they first appear. Commands that are not an
// absolute path name no directory.
func Dirs(doc []byte, path string) ([]string, error) {
	found, err := Parse(doc, path)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range found {
		exe := firstWord(e.Command)
		if !filepath.IsAbs(exe) {
			continue
		}
		if dir := filepath.Dir(exe); !seen[dir] {
			seen[dir] = true
			out = append(out, dir)
		}
	}
	return out, nil
}

// HooksDisabled reports whether doc sets disableAllHooks, which turns every
// hook off whatever is registered.
func HooksDisabled(doc []byte) bool {
	return gjson.GetBytes(doc, "disableAllHooks").Type == gjson.True
}

// Missing returns the hook programs not present as executables in binDir.
func Missing(binDir string) []string {
	var out []string
	for _, h := range Hooks {
		if !executable(filepath.Join(binDir, h.Program)) {
			out = append(out, h.Program)
		}
	}
	return out
}
