package cli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/taskcycle"
)

var recoverVerb = &command{
	name:    "recover",
	args:    "[--dry-run] [--resume ID] [--json]",
	summary: "recover interrupted in-progress tasks with the protocol's decision matrix (idempotent)",
	run:     runRecover,
}

// recoveredJSON is one task in `recover --json`.
type recoveredJSON struct {
	ID       string `json:"id"`
	Row      string `json:"row,omitempty"`
	Facts    string `json:"facts,omitempty"`
	Action   string `json:"action,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Status   string `json:"status"`
	Left     string `json:"left,omitempty"`
	Error    string `json:"error,omitempty"`
	Snapshot string `json:"snapshot,omitempty"`
}

func runRecover(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	asJSON := fs.Bool("json", false, "print JSON for machines")
	dryRun := fs.Bool("dry-run", false, "assess and say what would be done, change nothing")
	resume := fs.String("resume", "", "keep task ID in progress instead of failing it: only when recovery finds checkpoints but no changes, and you have verified the checkpointed state")
	if err := e.parseNone(c, fs, args); err != nil {
		return e.fail(err)
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	ctx, stop := interruptible()
	defer stop()
	got, err := e.worker(dir).Recover(ctx, taskcycle.RecoverOptions{DryRun: *dryRun, Resume: *resume})
	if err != nil {
		return e.failCycle(err)
	}
	code := ExitOK
	for _, r := range got {
		if r.Err == nil {
			continue
		}
		var fe *failure.Error
		if errors.As(r.Err, &fe) && exitCode(fe.Category) == ExitError {
			code = ExitError
		} else if code == ExitOK {
			code = ExitNegative
		}
	}
	if *asJSON {
		list := []recoveredJSON{}
		for _, r := range got {
			j := recoveredJSON{ID: r.TaskID, Action: r.Action, Reason: r.Reason, Left: r.Left, Status: "in_progress"}
			if r.Assessed {
				j.Row, j.Facts = r.Row.String(), r.Facts.Summary()
			}
			if r.Outcome != nil {
				j.Status = r.Outcome.Task.Status
				if r.Outcome.Failure != nil {
					j.Snapshot = r.Outcome.Failure.Snapshot
				}
			}
			if r.Err != nil {
				j.Error = r.Err.Error()
			}
			list = append(list, j)
		}
		out := map[string]any{"recovered": list}
		enc := json.NewEncoder(e.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		enc.Encode(out)
		return code
	}
	if len(got) == 0 {
		fmt.Fprintln(e.Stdout, "nothing to recover: no interrupted task in progress")
		return ExitOK
	}
	for _, r := range got {
		switch {
		case r.Action != "":
			fmt.Fprintf(e.Stdout, "%s: RECOVERY action=%q reason=%q\n", r.TaskID, r.Action, r.Reason)
			if o := r.Outcome; o != nil && o.Failure != nil && o.Failure.Snapshot != "" {
				fmt.Fprintf(e.Stdout, "  the attempt is saved as %s\n", o.Failure.Snapshot)
			}
		case r.Err != nil:
			fmt.Fprintf(e.Stdout, "%s: %s\n", r.TaskID, r.Left)
			e.failCycle(r.Err)
		case r.Assessed:
			fmt.Fprintf(e.Stdout, "%s: %s (found %s: %s)\n", r.TaskID, r.Left, r.Row, r.Facts.Summary())
		default:
			fmt.Fprintf(e.Stdout, "%s: %s\n", r.TaskID, r.Left)
		}
	}
	return code
}
