package cli

import (
	"encoding/json"
	"fmt"

	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/taskcycle"
)

var nextVerb = &command{
	name:    "next",
	args:    "[--json]",
	summary: "validate dependencies (recording what they fail) and print the next eligible task",
	run:     runNext,
}

func isActive(dir string) bool { return root.Active(dir) }

func runNext(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	asJSON := fs.Bool("json", false, "print JSON for machines")
	if err := e.parseNone(c, fs, args); err != nil {
		return e.fail(err)
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	s, err := statecache.Update(dir, func(s *state.State) error {
		return progress.Append(dir, taskcycle.ValidateDependencies(s, e.Now())...)
	})
	if err != nil {
		return e.fail(err)
	}
	choice, why := e.worker(dir).Next(s)
	if *asJSON {
		out := map[string]any{"next": nil}
		if t := choice.Next; t != nil {
			out["next"] = map[string]any{"id": t.ID, "title": t.Title, "status": t.Status, "priority": t.Priority,
				"attempts": t.Attempts, "max_attempts": t.MaxAttempts, "validation": t.Command}
		} else {
			out["why"] = string(why)
		}
		if len(choice.Skipped) > 0 {
			var skipped []skippedJSON
			for _, t := range choice.Skipped {
				skipped = append(skipped, skippedJSON{ID: t.ID, Why: noCheck, Fix: checkFix(t.ID)})
			}
			out["skipped"] = skipped
		}
		json.NewEncoder(e.Stdout).Encode(out)
	} else if choice.Next != nil {
		fmt.Fprintf(e.Stdout, "%s: %s\n", choice.Next.ID, choice.Next.Title)
	} else {
		fmt.Fprintf(e.Stdout, "none: %s\n", why)
	}
	if !*asJSON {
		printSkipped(e.Stderr, choice.Skipped, s.Tasks)
	}
	if choice.Next == nil {
		return ExitNegative
	}
	return ExitOK
}
