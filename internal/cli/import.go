package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/plan"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/taskcycle"
)

var importVerb = &command{
	name:    "import",
	args:    "FILE [--format " + strings.Join(plan.Formats, "|") + "] [--tag NAME] [--validate CMD] [--dry-run] [--all]",
	summary: "add the tasks of a plan kept elsewhere (feature_list.json, Taskmaster, Beads, gh issue list --json, a spec's tasks.md, a Cursor plan, a Backlog.md folder, a Markdown checklist); run again, it updates the tasks not yet started",
	run:     runImport,
}

// maxPlanBytes bounds a plan file read whole.
const maxPlanBytes = 64 << 20

// importListed is how many lines an import prints of what it does to
// each item (added, updated, kept, skipped) before it sums up the rest:
// a plan of hundreds of items would fill a terminal, and the context of
// the agent that ran it, with lines alike. --all prints every one.
const importListed = 50

// errDryRun ends an import's transaction without saving.
var errDryRun = errors.New("dry run")

// importStep is one thing an import does (or would do) to the tasks.
type importStep struct {
	verb    string // added, updated, kept
	id      string
	item    plan.Item
	fields  []string // updated: what changed
	deps    []string // added: the tasks it waits on
	why     string   // kept: why it was not changed
	checked bool     // given the validation command of --validate
}

func runImport(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	format := fs.String("format", "", "the plan's format (default: told from the file's name and content)")
	tag := fs.String("tag", "", "of a Taskmaster file, import only this tag (default: every tag)")
	dryRun := fs.Bool("dry-run", false, "print what would change and change nothing")
	all := fs.Bool("all", false, fmt.Sprintf("print a line for every item (default: the first %d)", importListed))
	check := fs.String("validate", "", "the validation command of every imported task that has none (a plan's items carry none)")
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) != 1 {
		return e.fail(usageErr(c, "expected one FILE"))
	}
	file := pos[0]
	p, err := readPlan(e.path(file), file, *format)
	if err != nil {
		return e.fail(err)
	}
	if *tag != "" {
		if err := p.OnlyTag(*tag); err != nil {
			return e.fail(err)
		}
	}
	var dir string
	if *dryRun {
		dir, err = e.viewRoot()
	} else {
		dir, err = e.stateRoot()
	}
	if err != nil {
		return e.fail(err)
	}
	*check = strings.TrimSpace(*check)
	if *check != "" {
		if err := checkStored(dir, e.Cwd, map[string]string{"validate": *check}); err != nil {
			return e.fail(err)
		}
	}
	var steps []importStep
	var warnings, noCheck, apart, before []string
	unchanged, checked := 0, 0
	_, err = statecache.Update(dir, func(s *state.State) error {
		edited, from := importLog(dir)
		before = knownByNumber(s, p)
		apart = setApart(s, p, dir, e.path(file), file, from)
		steps, warnings, unchanged, err = applyPlan(s, p, stamp(e.Now()), loggedIDs(dir), *check, edited)
		if err != nil {
			return err
		}
		checked = 0
		for _, st := range steps {
			if st.checked {
				checked++
			}
		}
		noCheck = uncheckedOf(s, p)
		if *dryRun {
			return errDryRun
		}
		personal := personalSteps(steps)
		if personal != "" {
			if who := e.invoker(); who.InSession() {
				return failure.New(failure.Usage, "this import %s: a person's decision, refused inside a Claude Code session (%s); an import that only adds pending tasks is not", personal, who.Session).
					WithHint("ask the user to run `harness import %s` in their terminal (`--dry-run` shows what it does)", failure.ShellArg(file))
			}
		}
		var entries []progress.Entry
		if personal != "" {
			p := e.personLine(dir, "import "+file, "")
			p.Session = s.SessionCount
			entries = append(entries, p)
		}
		key := planKey(e.path(file), dir) // a path walk and git.Top: once, not per step
		for _, st := range steps {
			if msg := st.logLine(key); msg != "" {
				entries = append(entries, progress.Entry{Time: e.Now(), Session: s.SessionCount, Type: progress.Init, Message: msg})
			}
		}
		if len(entries) == 0 {
			return nil
		}
		return progress.Append(dir, entries...)
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return e.fail(err)
	}
	would := ""
	if *dryRun {
		would = "would be "
	}
	counts := map[string]int{}
	listed, unlisted := 0, 0
	list := func(line string) {
		if *all || listed < importListed {
			fmt.Fprintln(e.Stdout, line)
			listed++
			return
		}
		unlisted++
	}
	for _, st := range steps {
		counts[st.verb]++
		line := fmt.Sprintf("%s%s %s ← %s: %s", would, st.verb, st.id, st.item.Source, st.item.Title)
		if len(st.deps) > 0 {
			// What the plan's nesting, numbers or links came to, for the
			// person to check before the work starts.
			line += " (waits on " + strings.Join(st.deps, ", ") + ")"
		}
		switch {
		case st.verb == "added" && st.item.Done:
			line += " (done in the plan: imported completed, never verified by the harness)"
			counts["done"]++
		case st.verb == "updated":
			line += " (" + strings.Join(st.fields, ", ") + ")"
		case st.verb == "kept":
			line += " (" + st.why + ")"
		}
		list(line)
	}
	for _, sk := range p.Skipped {
		list(fmt.Sprintf("skipped %s: %s (%s)", sk.Source, sk.Title, sk.Why))
	}
	if unlisted > 0 {
		where := "`harness status --all` lists every task"
		if *dryRun {
			where = "--all prints each"
		}
		fmt.Fprintf(e.Stdout, "… and %d more (%s)\n", unlisted, where)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(e.Stderr, "WARN [%s] %s\n", failure.Config, n)
	}
	for _, w := range warnings {
		fmt.Fprintf(e.Stderr, "WARN [%s] %s\n", failure.Dependency, w)
	}
	for _, w := range apart {
		fmt.Fprintf(e.Stderr, "WARN [%s] %s\n", failure.Config, w)
	}
	for _, b := range before {
		fmt.Fprintln(e.Stdout, b)
	}
	fmt.Fprintf(e.Stdout, "%s (%s): %d added (%d done), %d updated, %d unchanged, %d kept as the harness has them, %d skipped\n",
		file, p.Format, counts["added"], counts["done"], counts["updated"], unchanged, counts["kept"], len(p.Skipped))
	if checked > 0 {
		fmt.Fprintf(e.Stdout, "validation: %d task(s) %sgiven %s (--validate)\n", checked, would, failure.ShellArg(*check))
	}
	if len(noCheck) > 0 {
		fmt.Fprintf(e.Stdout, "%d task(s) of this plan have no validation command, so no session can claim or complete them; give them one check, or each its own:\n", len(noCheck))
		fmt.Fprintf(e.Stdout, "  harness import %s --validate \"COMMAND\"\n", failure.ShellArg(file))
		for i, id := range noCheck {
			if i == maxListed {
				fmt.Fprintf(e.Stdout, "  … and %d more (`harness edit --where no-validation --validate \"COMMAND\" --dry-run` lists them)\n", len(noCheck)-i)
				break
			}
			fmt.Fprintf(e.Stdout, "  %s\n", taskcycle.CheckCommand(id))
		}
	}
	if *dryRun {
		fmt.Fprintln(e.Stdout, "dry run: nothing was changed")
	}
	return ExitOK
}

// applyPlan makes the tasks of s follow plan p: an item no task comes
// from is added (completed when it is done in the plan); the task of an
// item is updated only while the harness has not started it (pending, no
// attempt, no claim, no checkpoint), in its title, description, acceptance
// criteria, priority and dependencies, and completed when the plan says
// it is done; a task the harness has started, completed or failed is
// never changed. A task added, or one not started and not completed that
// has no validation command, is given check (when not ""). It returns what it did, the dependencies it left out and
// how many items needed nothing.
//
// A field set with `harness edit` (edited, by task id: a person's
// decision, or an agent's title or priority) stays as set: an import never
// puts the plan's value back, and says so where the two differ.
func applyPlan(s *state.State, p *plan.Plan, now string, logged int, check string, edited map[string]map[string]bool) (steps []importStep, warnings []string, unchanged int, err error) {
	// The cycles the file holds already (written by hand) are not the
	// plan's: only a new one refuses the import. Linear, not a search per
	// task, so a plan of thousands of items imports at once.
	had := map[string]bool{}
	for _, c := range schedule.Cycles(s.Tasks) {
		had[c.String()] = true
	}
	idOf := map[string]string{}
	for i := range s.Tasks {
		if src := s.Tasks[i].Source; src != "" {
			idOf[src] = s.Tasks[i].ID
		}
	}
	// Every new item gets its id first, so any item may depend on any other.
	added := make([]bool, len(p.Items))
	newID := idCounter(s, logged)
	for i, it := range p.Items {
		if _, ok := idOf[it.Source]; !ok {
			id := newID()
			idOf[it.Source] = id
			s.AddTask(state.Task{ID: id, Title: it.Title, Status: state.Pending, Priority: it.Priority, DependsOn: []string{},
				MaxAttempts: state.DefaultMaxAttempts, TimeoutSeconds: state.DefaultTimeoutSeconds, Source: it.Source,
				Command: check})
			added[i] = true
		}
	}
	at := make(map[string]int, len(s.Tasks)) // s.Task would scan for each item
	for i := range s.Tasks {
		at[s.Tasks[i].ID] = i
	}
	skipped := map[string]string{}
	for _, sk := range p.Skipped {
		skipped[sk.Source] = sk.Why
	}
	for i, it := range p.Items {
		id := idOf[it.Source]
		deps := []string{}
		for _, d := range it.DependsOn {
			switch dep, ok := idOf[d]; {
			case ok && dep != id && !slices.Contains(deps, dep):
				deps = append(deps, dep)
			case skipped[d] != "":
				warnings = append(warnings, fmt.Sprintf("%s (%s) depends on %s, which the import skips (%s): that dependency is left out", id, it.Source, d, skipped[d]))
			case !ok:
				warnings = append(warnings, fmt.Sprintf("%s (%s) depends on %s, which is neither in the plan nor imported before: that dependency is left out", id, it.Source, d))
			}
		}
		t := &s.Tasks[at[id]]
		if added[i] {
			t.Description, t.Acceptance, t.DependsOn = it.Description, it.Acceptance, deps
			if it.Done {
				t.Status, t.CompletedAt = state.Completed, now
			}
			steps = append(steps, importStep{verb: "added", id: id, item: it, deps: deps, checked: check != ""})
			continue
		}
		var fields, theirs []string
		note := func(field string, same bool) {
			switch {
			case same:
			case edited[id][field]:
				theirs = append(theirs, field)
			default:
				fields = append(fields, field)
			}
		}
		note("title", t.Title == it.Title)
		note("description", t.Description == it.Description)
		note("acceptance", slices.Equal(t.Acceptance, it.Acceptance))
		note("priority", t.Priority == it.Priority)
		note("depends_on", slices.Equal(t.DependsOn, deps))
		done := it.Done && t.Status != state.Completed
		if done {
			fields = append(fields, "completed")
		}
		checked := check != "" && t.Status != state.Completed && strings.TrimSpace(t.Command) == ""
		if checked {
			fields = append(fields, "validation.command")
		}
		personal := fmt.Sprintf("%s as `harness edit` set it: the plan's is not taken", strings.Join(theirs, ", "))
		switch {
		case len(fields) == 0 && len(theirs) == 0:
			unchanged++
			continue
		case started(t):
			steps = append(steps, importStep{verb: "kept", id: id, item: it,
				why: fmt.Sprintf("%s by the harness: an import changes only a task not yet started", t.Status)})
			continue
		case len(fields) == 0:
			steps = append(steps, importStep{verb: "kept", id: id, item: it, why: personal})
			continue
		}
		set := func(field string) bool { return slices.Contains(fields, field) }
		if set("title") {
			t.Title = it.Title
		}
		if set("description") {
			t.Description = it.Description
		}
		if set("acceptance") {
			t.Acceptance = it.Acceptance
		}
		if set("priority") {
			t.Priority = it.Priority
		}
		if set("depends_on") {
			t.DependsOn = deps
		}
		if len(theirs) > 0 {
			fields = append(fields, personal)
		}
		if done {
			t.Status, t.CompletedAt = state.Completed, now
		}
		if checked {
			t.Command = check
		}
		steps = append(steps, importStep{verb: "updated", id: id, item: it, fields: fields, checked: checked})
	}
	for _, cyc := range schedule.Cycles(s.Tasks) {
		if !had[cyc.String()] {
			// Named by the plan's own ids: the tasks it would add do not exist.
			named := make(schedule.Cycle, len(cyc))
			for i, id := range cyc {
				named[i] = id
				if t := s.Task(id); t != nil && t.Source != "" {
					named[i] = t.Source
				}
			}
			return nil, nil, 0, failure.New(failure.Config, "the plan's dependencies make a cycle: %s", named).
				WithHint("a task starts only when all its dependencies are completed, so no task on a cycle ever starts: leave out one link in the plan%s", cycleFix[p.Format])
		}
	}
	return steps, warnings, unchanged, nil
}

// importLog reads the progress log once for two things: the fields of
// each task set with `harness edit` ("Task edited: task-005 (priority,
// title)"; an import's own lines name the file they come from), and the
// plan file each source was last imported from, by its key, or as its
// import named it in a log written before keys ("… imported from
// specs/a/tasks.md (markdown:…)", "Task edited: … from FILE (SOURCE)").
func importLog(dir string) (edited map[string]map[string]bool, from map[string]string) {
	edited, from = map[string]map[string]bool{}, map[string]string{}
	f, err := safefile.Open(progress.Path(dir))
	if err != nil {
		return edited, from
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if _, rest, ok := strings.Cut(line, " Task added: "); ok {
			if i := strings.LastIndex(rest, " imported from "); i >= 0 {
				tail := rest[i+len(" imported from "):]
				if j := strings.Index(tail, "): "); j >= 0 {
					tail = tail[:j+1] // "…): done in the plan, imported completed, …"
				}
				importedFrom(from, tail)
			}
			continue
		}
		_, rest, ok := strings.Cut(line, " Task edited: ")
		if !ok {
			continue
		}
		if i := strings.LastIndex(rest, ") from "); i >= 0 {
			importedFrom(from, rest[i+len(") from "):])
			continue
		}
		id, list, ok := strings.Cut(rest, " (")
		list, ok2 := strings.CutSuffix(list, ")")
		if !ok || !ok2 {
			continue
		}
		for _, field := range strings.Split(list, ", ") {
			if edited[id] == nil {
				edited[id] = map[string]bool{}
			}
			edited[id][field] = true
		}
	}
	return edited, from
}

// importedFrom notes "FILE (SOURCE)", the end of an import's log line.
func importedFrom(from map[string]string, tail string) {
	i := strings.LastIndex(tail, " (")
	if i < 0 || !strings.HasSuffix(tail, ")") {
		return
	}
	from[tail[i+2:len(tail)-1]] = tail[:i]
}

// knownByNumber finds again the tasks an import made of a file of several
// repositories' issues when an issue was known by its number alone
// (github:#N, and of two issues of one number, one kept): an item
// github:OWNER/REPO#N with no task of its own is the task github:#N whose
// title is its own, where no item of the file is github:#N itself, and
// that task takes the item's source (an export --from then finds it too).
// A file of one repository's issues that gained another's is found again
// the same way. It returns a line for each task so found.
func knownByNumber(s *state.State, p *plan.Plan) []string {
	bySource := map[string]*state.Task{}
	for i := range s.Tasks {
		if src := s.Tasks[i].Source; src != "" {
			bySource[src] = &s.Tasks[i]
		}
	}
	inPlan := map[string]bool{}
	for _, it := range p.Items {
		inPlan[it.Source] = true
	}
	var notes []string
	for _, it := range p.Items {
		rest, ok := strings.CutPrefix(it.Source, plan.GitHub+":")
		repo, number, numbered := strings.Cut(rest, "#")
		if !ok || !numbered || repo == "" || bySource[it.Source] != nil {
			continue
		}
		old := plan.GitHub + ":#" + number
		t := bySource[old]
		if t == nil || inPlan[old] || t.Title != it.Title {
			continue
		}
		delete(bySource, old) // one item takes it
		t.Source = it.Source
		bySource[it.Source] = t
		notes = append(notes, fmt.Sprintf("%s is %s, imported before as %s", it.Source, t.ID, old))
	}
	return notes
}

// setApart gives an item of plan p (the file at path, named file) a
// source of its own, SOURCE@KEY (planKey), where another plan file of the
// same name in another directory (each spec's tasks.md) made a task of its
// source and is still there and still holds it: two specs' items of one
// text ("T001 Create project structure per implementation plan", hashed
// alike) or two repositories' issue #12 are otherwise one task, and the
// second file's item is lost. An item set apart before keeps its source,
// and takes the one set apart for a file no longer where its key says
// (moved). A file named again as before, one gone, or one reached from
// another directory or a worktree of the repository is not another. The
// dependencies between p's items follow; it returns a line for each item
// set apart now.
func setApart(s *state.State, p *plan.Plan, root, path, file string, from map[string]string) []string {
	renamed, notes := apartSources(s, p, root, path, file, from)
	for i := range p.Items {
		it := &p.Items[i]
		if to, ok := renamed[it.Source]; ok {
			it.Source = to
		}
		for j, d := range it.DependsOn {
			if to, ok := renamed[d]; ok {
				it.DependsOn[j] = to
			}
		}
	}
	return notes
}

// apartSources is setApart's decision: the source each item of p set
// apart takes, by its own, and a line for each set apart now.
func apartSources(s *state.State, p *plan.Plan, root, path, file string, from map[string]string) (renamed map[string]string, notes []string) {
	ids := map[string]string{}
	apartOf := map[string][]string{} // the sources set apart, by their plain source
	for i := range s.Tasks {
		src := s.Tasks[i].Source
		if src == "" {
			continue
		}
		ids[src] = s.Tasks[i].ID
		if plain, _, ok := strings.Cut(src, "@"); ok {
			apartOf[plain] = append(apartOf[plain], src)
		}
	}
	key, base := planKey(path, root), root
	if top, err := git.Top(root); err == nil {
		base = top
	}
	holds := map[string]map[string]bool{} // another file's sources, read once
	held := func(at, src string) bool {
		if holds[at] == nil {
			holds[at] = planSources(at)
		}
		return holds[at][src]
	}
	// A log line names the plan by its key (planKey); an older one as its
	// import was given it, from the state root mostly.
	logged := func(name string) string {
		if filepath.IsAbs(name) {
			return name
		}
		if at := filepath.Join(base, filepath.FromSlash(name)); fileExists(at) {
			return at
		}
		return filepath.Join(root, name)
	}
	renamed = map[string]string{}
	for i := range p.Items {
		it := &p.Items[i]
		own := it.Source + "@" + key
		if ids[own] != "" {
			renamed[it.Source] = own
			continue
		}
		other := from[it.Source]
		if ids[it.Source] == "" || other == "" || other == key || filepath.Clean(other) == filepath.Clean(file) {
			continue // the task of its source is this file's, or no plan's
		}
		if at := logged(other); filepath.Base(at) != filepath.Base(path) || sameFile(at, path) || !held(at, it.Source) {
			// No other plan's: a file of another name (feature_list_v2.json
			// beside feature_list.json) is a newer version of the plan,
			// whose items update their tasks.
			continue
		}
		if was := moved(apartOf[it.Source], it.Source, base, held); was != "" {
			renamed[it.Source] = was
			continue
		}
		renamed[it.Source] = own
		notes = append(notes, fmt.Sprintf("%s: its item %s (%s) is also in %s, whose import made %s: imported apart, as %s",
			file, it.Source, it.Title, other, ids[it.Source], own))
	}
	return renamed, notes
}

// moved is the source set apart (among apart, the item src's) whose plan
// file is no longer where its key says, or no longer holds the item: the
// file was moved or renamed, and its items keep their tasks. "" when none.
func moved(apart []string, src, base string, held func(at, src string) bool) string {
	for _, a := range apart {
		_, key, _ := strings.Cut(a, "@")
		at := filepath.FromSlash(key)
		if !filepath.IsAbs(at) {
			at = filepath.Join(base, at)
		}
		if !held(at, src) {
			return a
		}
	}
	return ""
}

// planKey names the plan file at path apart from other plans: its path
// from the top of its repository, so that a worktree's copy of the plan is
// the same plan, else from the state root, else the path itself; with
// forward slashes.
func planKey(path, root string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // as git.Top answers
	}
	base := root
	if top, err := git.Top(filepath.Dir(path)); err == nil {
		base = top
	}
	if rel, err := filepath.Rel(base, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(path)
}

// fileExists reports whether path names something.
func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// sameFile reports whether a and b name one file (b may not exist yet).
func sameFile(a, b string) bool {
	ai, err := os.Stat(a)
	if err != nil {
		return false
	}
	bi, err := os.Stat(b)
	return err == nil && os.SameFile(ai, bi)
}

// readPlan reads the plan at path (name as the person gave it), of
// format ("": told from the file): a plan file, with the files beside it
// at hand, or a Backlog.md directory.
func readPlan(path, name, format string) (*plan.Plan, error) {
	if isDir(path) {
		if format != "" && format != plan.Backlog {
			return nil, failure.New(failure.Usage, "%s is a directory: a %s plan is a file", name, format)
		}
		d, err := readBacklogDir(path, name)
		if err != nil {
			return nil, err
		}
		p, err := d.parse()
		if err == nil && len(p.Items) == 0 {
			// A folder of other plans (.cursor/plans): each is a file.
			return nil, failure.New(failure.Config, "%s holds no Backlog.md task file (front matter with an `id:` and a `title:`): a folder is read as Backlog.md's", name).
				WithHint("import a plan file of it: harness import %s", failure.ShellArg(filepath.Join(name, filepath.Base(d.files[0].Name))))
		}
		return p, err
	}
	data, err := safefile.ReadFile(path, maxPlanBytes)
	if err != nil {
		return nil, failure.Wrap(failure.Config, err, "cannot read %s: %v", name, err)
	}
	if format == "" {
		if format, err = plan.Detect(name, data); err != nil {
			return nil, err
		}
	}
	beside := func(other string) []byte {
		b, err := safefile.ReadFile(filepath.Join(filepath.Dir(path), other), maxPlanBytes)
		if err != nil {
			return nil
		}
		return b
	}
	return plan.ParseBeside(format, name, data, beside)
}

// planSources is the set of the sources of the plan at path; empty when
// it is gone or does not read.
func planSources(path string) map[string]bool {
	out := map[string]bool{}
	p, err := readPlan(path, path, "")
	if err != nil {
		return out
	}
	for _, it := range p.Items {
		out[it.Source] = true
	}
	return out
}

// cycleFix is each tool's own way to take a cycle out of its plan.
var cycleFix = map[string]string{
	plan.Taskmaster: " (`task-master fix-dependencies` does it)",
	plan.Beads:      " (`bd dep cycles` lists them, `bd dep remove` takes one out)",
	plan.GitHub:     ` (a "depends on" or "blocked by" line of an issue's body)`,
	plan.Cursor:     " (a to-do's `dependencies:` in the plan's front matter)",
	plan.Backlog:    " (`backlog task edit ID --dep …`)",
	plan.Markdown:   " (an item's nesting, a `_Depends:` line, or a sub-task's number)",
}

// started reports whether the harness holds task t as its own: anything
// but a pending task never attempted, claimed or checkpointed.
func started(t *state.Task) bool {
	return t.Status != state.Pending || t.Attempts > 0 || t.ClaimedBy != "" || t.StartedAtCommit != "" || len(t.Checkpoints) > 0
}

// personalSteps says what of an import only a person decides ("" when it
// only adds pending tasks): an update of a task's definition, or a task
// marked completed without the harness's check.
func personalSteps(steps []importStep) string {
	for _, st := range steps {
		switch {
		case st.verb == "updated" && slices.Equal(st.fields, []string{"validation.command"}):
			// A check where there is none: the agent's to give, as with edit.
		case st.verb == "updated":
			return "changes " + st.id + " (" + strings.Join(st.fields, ", ") + ")"
		case st.verb == "added" && st.item.Done:
			return "adds " + st.id + " completed"
		}
	}
	return ""
}

// logLine is the INIT line of a step ("" for none): the add's, which
// loggedIDs reads, with where the task came from, the plan named by its
// key (planKey: from the repository's top, as typed from it mostly).
func (st importStep) logLine(file string) string {
	t := st.item
	switch st.verb {
	case "added":
		msg := fmt.Sprintf("Task added: %s (id=%s priority=%s) imported from %s (%s)", t.Title, st.id, t.Priority, file, t.Source)
		if t.Done {
			msg += ": done in the plan, imported completed, never verified by the harness"
		}
		return msg
	case "updated":
		return fmt.Sprintf("Task edited: %s (%s) from %s (%s)", st.id, strings.Join(st.fields, ", "), file, t.Source)
	}
	return ""
}

// uncheckedOf lists the tasks of plan p still to do that have no
// validation command: claim passes over them until a person gives one.
func uncheckedOf(s *state.State, p *plan.Plan) []string {
	ours := map[string]bool{}
	for _, it := range p.Items {
		ours[it.Source] = true
	}
	var out []string
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if ours[t.Source] && schedule.Unchecked(t) {
			out = append(out, t.ID)
		}
	}
	return out
}
