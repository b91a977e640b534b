package cli

import (
	"flag"
	"fmt"
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
	args:    `ID [--title T] [--priority P0|P1|P2] [--depends-on ID,…] [--validate CMD] [--timeout SECONDS] [--max-attempts N] [--cleanup CMD] [--allowed-paths GLOB,…] [--accept TEXT] [--review on|off|default]`,
	summary: "change a task's definition, with the checks of add (inside a Claude Code session only the title, the priority, and a validation where there is none)",
	run:     runEdit,
}

// agentEditable are the fields an agent may change from inside a Claude
// Code session: the task's name and order, and a validation command where
// the task has none (without one it can never complete). The rest defines
// what done means (the check, the scope, the attempts, the order of the
// work): a person's decision, made in their own terminal.
var agentEditable = map[string]bool{"title": true, "priority": true}

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
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) != 1 {
		return e.fail(usageErr(c, "expected one task ID"))
	}
	id := pos[0]
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if len(set) == 0 {
		return e.fail(usageErr(c, "nothing to change: give at least one flag"))
	}
	if set["priority"] && *priority != "P0" && *priority != "P1" && *priority != "P2" {
		return e.fail(usageErr(c, "--priority must be P0, P1 or P2, got %q", *priority))
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
	dir, err := e.stateRoot()
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
	var changed, reopenable []string
	_, err = statecache.Update(dir, func(s *state.State) error {
		t := s.Task(id)
		if t == nil {
			return failure.New(failure.Config, "no task %q", id).WithHint("`harness status` lists the task ids")
		}
		if t.Status == state.InProgress && t.ClaimedBy != "" && t.ClaimedBy != me {
			return failure.New(failure.Usage, "%s is in progress by %s: it cannot be changed under them", id, t.ClaimedBy).
				WithHint("wait until %s validates or fails it, or ask the user", t.ClaimedBy)
		}
		var personal []string // the flags that are a person's decision
		for name := range set {
			if !agentEditable[name] && (name != "validate" || strings.TrimSpace(t.Command) != "") {
				personal = append(personal, "--"+name)
			}
		}
		sort.Strings(personal)
		if len(personal) > 0 {
			if who := e.invoker(); who.InSession() {
				return failure.New(failure.Usage, "%s of %s is the user's decision: it defines what done means, so it is not changed from inside a Claude Code session (%s)", personal[0], id, who.Session).
					WithHint("ask the user to run `harness edit %s %s …` in their terminal", failure.ShellArg(id), personal[0])
			}
		}
		note := func(field string) { changed = append(changed, field) }
		if set["title"] {
			t.Title = strings.TrimSpace(*title)
			note("title")
		}
		if set["priority"] {
			t.Priority = *priority
			note("priority")
		}
		if set["depends-on"] {
			list := splitList(*deps)
			for _, d := range list {
				if d == id {
					return failure.New(failure.Config, "task %s cannot depend on itself", id)
				}
				if s.Task(d) == nil {
					return failure.New(failure.Config, "unknown dependency %q", d).WithHint("`harness status` lists the task ids")
				}
			}
			t.DependsOn = list
			if err := checkDependsOn(s, id); err != nil {
				return err
			}
			note("depends_on")
		}
		if set["validate"] {
			t.Command = strings.TrimSpace(*validate)
			note("validation.command")
		}
		if set["timeout"] {
			t.TimeoutSeconds = *timeout
			note("validation.timeout_seconds")
		}
		if set["max-attempts"] {
			t.MaxAttempts = *maxAttempts
			note("max_attempts")
		}
		if set["cleanup"] {
			t.Cleanup = strings.TrimSpace(*cleanup)
			note("on_failure.cleanup")
		}
		if set["allowed-paths"] {
			t.AllowedPaths = splitListOrNil(*allowed)
			note("allowed_paths")
		}
		if set["accept"] {
			t.Acceptance = accept.list()
			note("acceptance")
		}
		if set["review"] {
			t.Review = reviewValue[*reviewFlag]
			note("review")
		}
		sort.Strings(changed)
		reopenable = schedule.Reopenable(s.Tasks)
		var entries []progress.Entry
		if len(personal) > 0 {
			p := e.personLine(dir, "edit "+id+" "+strings.Join(personal, " "), "")
			p.Session = s.SessionCount
			entries = append(entries, p)
		}
		entries = append(entries, progress.Entry{Time: e.Now(), Session: s.SessionCount, Type: progress.Init,
			Message: fmt.Sprintf("Task edited: %s (%s)", id, strings.Join(changed, ", "))})
		return progress.Append(dir, entries...)
	})
	if err != nil {
		return e.fail(err)
	}
	fmt.Fprintf(e.Stdout, "%s: changed %s\n", id, strings.Join(changed, ", "))
	if set["validate"] {
		e.warnMissingProgram(dir, id, *validate)
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
