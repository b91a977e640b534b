package cli

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/taskcycle"
)

var editVerb = &command{
	name:    "edit",
	args:    `ID|ID..ID… [--where COND] [--dry-run] [--title T] [--priority P0|P1|P2] [--depends-on ID,…] [--validate CMD] [--timeout SECONDS] [--max-attempts N] [--cleanup CMD] [--allowed-paths GLOB,…] [--accept TEXT] [--review on|off|default]`,
	summary: "change the definition of a task, or of many at once (ids, ranges task-010..task-040, --where status=pending, source=taskmaster:*, no-validation), with the checks of add (inside a Claude Code session only the title, the priority, and a validation where there is none)",
	run:     runEdit,
}

// agentEditable are the fields an agent may change from inside a Claude
// Code session: the task's name and order, and a validation command where
// the task has none (without one it can never complete). The rest defines
// what done means (the check, the scope, the attempts, the order of the
// work): a person's decision, made in their own terminal.
var agentEditable = map[string]bool{"title": true, "priority": true}

// personalFlags are the flags of set that are a person's decision for
// task t: all but agentEditable, and --validate where t has a check.
func personalFlags(set map[string]bool, t *state.Task) []string {
	var personal []string
	for name := range set {
		if !agentEditable[name] && (name != "validate" || strings.TrimSpace(t.Command) != "") {
			personal = append(personal, "--"+name)
		}
	}
	sort.Strings(personal)
	return personal
}

// edited is what an edit changes (or would change) in one task.
type edited struct {
	id     string
	fields []string
}

func runEdit(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	title := fs.String("title", "", "the task's title")
	priority := fs.String("priority", "", "P0, P1 or P2")
	deps := fs.String("depends-on", "", "comma-separated task ids (\"\" for none)")
	validate := fs.String("validate", "", "validation command")
	timeout := fs.Int("timeout", 0, "validation timeout in seconds")
	maxAttempts := fs.Int("max-attempts", 0, "attempts before the task fails for good")
	cleanup := fs.String("cleanup", "", "on_failure.cleanup command (\"\" for none)")
	allowed := fs.String("allowed-paths", "", "comma-separated globs the task may write (\"\" for no scope)")
	var accept criteria
	fs.Var(&accept, "accept", "the task's acceptance criteria, one a flag, replacing its list (--accept \"\" for none)")
	reviewFlag := fs.String("review", "", "the reviewer gate for this task: on, off, or default (session_config.review decides)")
	var where criteria
	fs.Var(&where, "where", "edit only the tasks that meet this condition ("+whereKeys+"); repeatable, all must hold")
	dryRun := fs.Bool("dry-run", false, "print what would change and change nothing")
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) == 0 && len(where) == 0 {
		return e.fail(usageErr(c, "expected a task ID, a range (task-010..task-040) or --where"))
	}
	sel, err := newSelection(pos, where)
	if err != nil {
		return e.fail(usageErr(c, "%v", err))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	delete(set, "where")
	delete(set, "dry-run")
	if len(set) == 0 {
		return e.fail(usageErr(c, "nothing to change: give at least one flag"))
	}
	if set["title"] && sel.many() {
		return e.fail(usageErr(c, "--title names one task: give one ID"))
	}
	if set["priority"] {
		p, ok := priorityOf(*priority)
		if !ok {
			return e.fail(usageErr(c, "--priority must be P0, P1 or P2, got %q", *priority))
		}
		*priority = p
	}
	if set["timeout"] && *timeout <= 0 || set["max-attempts"] && *maxAttempts <= 0 {
		return e.fail(usageErr(c, "--timeout and --max-attempts must be positive"))
	}
	if set["title"] && strings.TrimSpace(*title) == "" {
		return e.fail(usageErr(c, "--title may not be empty"))
	}
	reviewValue := map[string]string{"on": state.ReviewOn, "off": state.ReviewOff, "default": ""}
	if _, ok := reviewValue[*reviewFlag]; set["review"] && !ok {
		return e.fail(usageErr(c, "--review must be on, off or default, got %q", *reviewFlag))
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
	stored := map[string]string{}
	for _, name := range []string{"validate", "cleanup"} {
		if set[name] {
			stored[name] = map[string]string{"validate": *validate, "cleanup": *cleanup}[name]
		}
	}
	if err := checkStored(dir, e.Cwd, stored); err != nil {
		return e.fail(err)
	}
	me := taskcycle.WorkerID()
	var changes []edited
	var reopenable []string
	selected := 0
	_, err = statecache.Update(dir, func(s *state.State) error {
		tasks, err := sel.tasks(s)
		if err != nil {
			return err
		}
		if len(tasks) == 0 {
			return failure.New(failure.Config, "no task is %s: nothing to change", sel).
				WithHint("`harness status` lists the tasks; `harness edit … --dry-run` shows what a selection takes")
		}
		selected = len(tasks)
		var personal []string // the flags that are a person's decision, for some task
		for _, t := range tasks {
			if t.Status == state.InProgress && t.ClaimedBy != "" && t.ClaimedBy != me {
				hint := fmt.Sprintf("wait until %s validates or fails it, or ask the user", t.ClaimedBy)
				if sel.many() {
					hint = "leave it out (`--where status=pending`), or " + hint
				}
				return failure.New(failure.Usage, "%s is in progress by %s: it cannot be changed under them", t.ID, t.ClaimedBy).WithHint("%s", hint)
			}
			p := personalFlags(set, t)
			if len(p) > 0 && len(personal) == 0 {
				if who := e.invoker(); who.InSession() {
					return failure.New(failure.Usage, "%s of %s is the user's decision: it defines what done means, so it is not changed from inside a Claude Code session (%s)", p[0], t.ID, who.Session).
						WithHint("ask the user to run `harness edit %s %s …` in their terminal", sel, p[0])
				}
			}
			for _, f := range p {
				if !slices.Contains(personal, f) {
					personal = append(personal, f)
				}
			}
		}
		sort.Strings(personal)
		var depList []string
		if set["depends-on"] {
			depList = splitList(*deps)
			for _, d := range depList {
				if s.Task(d) == nil {
					return failure.New(failure.Config, "unknown dependency %q", d).WithHint("%s", s.IDHint(d))
				}
			}
		}
		for _, t := range tasks {
			var fields []string
			note := func(field string, same bool) {
				if !same {
					fields = append(fields, field)
				}
			}
			if set["title"] {
				v := strings.TrimSpace(*title)
				note("title", t.Title == v)
				t.Title = v
			}
			if set["priority"] {
				note("priority", t.Priority == *priority)
				t.Priority = *priority
			}
			if set["depends-on"] {
				if slices.Contains(depList, t.ID) {
					return failure.New(failure.Config, "task %s cannot depend on itself", t.ID)
				}
				if !slices.Equal(t.DependsOn, depList) {
					t.DependsOn = slices.Clone(depList)
					if err := checkDependsOn(s, t.ID); err != nil {
						return err
					}
					note("depends_on", false)
				}
			}
			if set["validate"] {
				v := strings.TrimSpace(*validate)
				note("validation.command", t.Command == v)
				t.Command = v
			}
			if set["timeout"] {
				note("validation.timeout_seconds", t.TimeoutSeconds == *timeout)
				t.TimeoutSeconds = *timeout
			}
			if set["max-attempts"] {
				note("max_attempts", t.MaxAttempts == *maxAttempts)
				t.MaxAttempts = *maxAttempts
			}
			if set["cleanup"] {
				v := strings.TrimSpace(*cleanup)
				note("on_failure.cleanup", t.Cleanup == v)
				t.Cleanup = v
			}
			if set["allowed-paths"] {
				v := splitListOrNil(*allowed)
				note("allowed_paths", slices.Equal(t.AllowedPaths, v))
				t.AllowedPaths = v
			}
			if set["accept"] {
				v := accept.list()
				note("acceptance", slices.Equal(t.Acceptance, v))
				t.Acceptance = v
			}
			if set["review"] {
				note("review", t.Review == reviewValue[*reviewFlag])
				t.Review = reviewValue[*reviewFlag]
			}
			if len(fields) > 0 {
				sort.Strings(fields)
				changes = append(changes, edited{t.ID, fields})
			}
		}
		if *dryRun {
			return errDryRun
		}
		reopenable = schedule.Reopenable(s.Tasks)
		var entries []progress.Entry
		if len(personal) > 0 && len(changes) > 0 {
			p := e.personLine(dir, "edit "+sel.String()+" "+strings.Join(personal, " "), "")
			p.Session = s.SessionCount
			entries = append(entries, p)
		}
		for _, ch := range changes {
			entries = append(entries, progress.Entry{Time: e.Now(), Session: s.SessionCount, Type: progress.Init,
				Message: fmt.Sprintf("Task edited: %s (%s)", ch.id, strings.Join(ch.fields, ", "))})
		}
		if len(entries) == 0 {
			return nil
		}
		return progress.Append(dir, entries...)
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return e.fail(err)
	}
	verb := "changed"
	if *dryRun {
		verb = "would change"
	}
	for _, ch := range changes {
		fmt.Fprintf(e.Stdout, "%s: %s %s\n", ch.id, verb, strings.Join(ch.fields, ", "))
		if set["validate"] && slices.Contains(ch.fields, "validation.command") {
			e.warnMissingProgram(dir, ch.id, *validate)
		}
	}
	switch {
	case sel.many():
		fmt.Fprintf(e.Stdout, "%d task(s) selected: %d %s, %d unchanged\n", selected, len(changes), verb, selected-len(changes))
	case len(changes) == 0:
		fmt.Fprintf(e.Stdout, "%s: unchanged (it has these values already)\n", pos[0])
	}
	if *dryRun {
		fmt.Fprintln(e.Stdout, "dry run: nothing was changed")
	}
	printReopenable(e, reopenable)
	return ExitOK
}

// checkDependsOn refuses the dependencies task id was just given when the
// work could never be done in their order: a cycle through it (no task on
// a cycle can ever start), or a completed task made to wait on work not
// done. Callers have checked each id exists and is not id itself.
func checkDependsOn(s *state.State, id string) error {
	if t := s.Task(id); t.Status == state.Completed {
		if open := schedule.Unfinished(s.Tasks, id); len(open) > 0 {
			return failure.New(failure.Config, "%s is completed: it cannot depend on %s, not completed", id, strings.Join(open, ", ")).
				WithHint("its work is done; add what is left as a task of its own: harness add TITLE --depends-on %s --validate CMD", failure.ShellArg(id))
		}
	}
	if cyc := schedule.CycleThrough(s.Tasks, id); cyc != nil {
		return failure.New(failure.Config, "%s cannot depend on %s: cycle: %s", id, cyc[1], cyc).
			WithHint("a task starts only when all its dependencies are completed, so no task on a cycle ever starts: leave out one of its links")
	}
	// A cycle through completed tasks holds nothing up today, but the
	// plan's order is still impossible: a task on it reopened (the
	// verification gate, a retry) could never start again.
	if cyc := schedule.PlanCycleThrough(s.Tasks, id); cyc != nil {
		return failure.New(failure.Config, "%s cannot depend on %s: cycle through completed tasks: %s", id, cyc[1], cyc).
			WithHint("it holds nothing up while they stay completed, but a task on it that is reopened could never start again: leave out one of its links")
	}
	return nil
}

// printReopenable says which tasks failed [DEPENDENCY] could run now, and
// the person's command that reopens them: their failure is for good, so
// fixing the plan alone does not bring them back.
func printReopenable(e *Env, ids []string) {
	if len(ids) > 0 {
		fmt.Fprintf(e.Stdout, "hint: %s failed [%s] and their dependencies are fixed now: a person reopens them with %s\n",
			strings.Join(ids, ", "), failure.Dependency, taskcycle.RetryCommand(ids))
	}
}
