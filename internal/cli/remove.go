package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/taskcycle"
)

var removeVerb = &command{
	name:    "remove",
	args:    "ID [--cascade]",
	summary: "remove a task (refused while others depend on it, unless --cascade removes them too; a person's decision: refused inside a Claude Code session)",
	run:     runRemove,
}

func runRemove(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	cascade := fs.Bool("cascade", false, "also remove every task that depends on it, directly or not")
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) != 1 {
		return e.fail(usageErr(c, "expected one task ID"))
	}
	id := pos[0]
	if err := e.personOnly("remove"); err != nil {
		// Removing a task an agent finds hard is the premature completion
		// the harness exists to prevent.
		return e.fail(failure.New(failure.Usage, "removing a task is the user's decision and is refused inside a Claude Code session (%s)", e.invoker().Session).
			WithHint("if %s cannot be done, `harness fail %s --category CONFIG \"why\"` and tell the user", id, failure.ShellArg(id)))
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	me := taskcycle.WorkerID()
	var gone []string
	_, err = statecache.Update(dir, func(s *state.State) error {
		if s.Task(id) == nil {
			return noTask(s, id)
		}
		drop := map[string]bool{id: true}
		for grew := true; grew; {
			grew = false
			for _, t := range s.Tasks {
				if drop[t.ID] {
					continue
				}
				for _, d := range t.DependsOn {
					if !drop[d] {
						continue
					}
					if !*cascade {
						return failure.New(failure.Config, "%s depends on %s", t.ID, d).
							WithHint("change its dependencies first (`harness edit %s --depends-on …`), or remove both with `harness remove %s --cascade`", failure.ShellArg(t.ID), failure.ShellArg(id))
					}
					drop[t.ID], grew = true, true
					break
				}
			}
		}
		for _, t := range s.Tasks {
			if drop[t.ID] && t.Status == state.InProgress && t.ClaimedBy != "" && t.ClaimedBy != me {
				return failure.New(failure.Usage, "%s is in progress by %s", t.ID, t.ClaimedBy).WithHint("wait until it is validated or failed")
			}
			if drop[t.ID] {
				gone = append(gone, t.ID)
			}
		}
		sort.Strings(gone)
		s.RemoveTasks(gone...)
		var entries []progress.Entry
		for _, g := range gone {
			entries = append(entries, progress.Entry{Time: e.Now(), Session: s.SessionCount, Type: progress.Init, Message: "Task removed: " + g})
		}
		return progress.Append(dir, entries...)
	})
	if err != nil {
		return e.fail(err)
	}
	fmt.Fprintf(e.Stdout, "removed %s\n", strings.Join(gone, ", "))
	return ExitOK
}
