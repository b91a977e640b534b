package cli

import (
	"fmt"

	"github.com/harness-agent/harness/internal/git"
)

var snapshotsVerb = &command{
	name:    "snapshots",
	args:    "[ID]",
	summary: "list the work trees saved before rollbacks (refs/harness/snapshots/<id>/<attempt>) and how to restore each",
	run:     runSnapshots,
	view:    true,
}

func runSnapshots(e *Env, c *command, args []string) int {
	id, dir, err := e.optionalTarget(c, e.flags(c), args)
	if err != nil {
		return e.fail(err)
	}
	s, err := e.load(dir)
	if err != nil {
		return e.fail(err)
	}
	tree, err := e.worker(dir).Tree(s)
	if err != nil {
		return e.fail(err)
	}
	snaps, err := git.Snapshots(tree.Top, id)
	if err != nil {
		return e.fail(err)
	}
	if len(snaps) == 0 {
		if id != "" && s.Task(id) == nil {
			// A removed task's snapshots are still listed; an id that
			// names neither is a typo, as every other verb says.
			return e.fail(noTask(s, id))
		}
		fmt.Fprintln(e.Stdout, "no snapshots")
		return ExitOK
	}
	for _, sn := range snaps {
		fmt.Fprintf(e.Stdout, "%s  %s  %s  %s\n", sn.Ref, stamp(sn.Date), git.Short(sn.Commit), sn.Subject)
		fmt.Fprintf(e.Stdout, "  restore: %s\n", git.RestoreCommand(tree.Top, sn.Ref))
	}
	return ExitOK
}
