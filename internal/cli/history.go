package cli

import (
	"fmt"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/remote"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/trail"
)

var historyVerb = &command{
	name: "history",
	args: "[--quiet]",
	summary: "replay a job shared through a git remote from its audit trail (the remote's refs/harness/state and refs/harness/tasks/*): every change, " +
		"who made it and what it did, checking that no task was held by two workers at once nor integrated twice (exit 1 when one was)",
	run:  runHistory,
	view: true,
}

func runHistory(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	quiet := fs.Bool("quiet", false, "print only the summary and any broken promise")
	if err := e.parseNone(c, fs, args); err != nil {
		return e.fail(err)
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	rc, ok := remote.Load(dir)
	if !ok {
		return e.fail(failure.New(failure.Usage, "this job is not shared through a git remote").
			WithHint("share it with `harness workers N --remote NAME`; `harness status` shows a job on one machine"))
	}
	if _, err := state.Sync(dir, remote.MachineRefs); err != nil {
		return e.fail(err)
	}
	r, err := trail.Replay(dir)
	if err != nil {
		return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot read the trail: %v", err))
	}
	if !*quiet {
		for _, s := range r.Steps {
			fmt.Fprintf(e.Stdout, "%s %s %s", s.Commit[:7], s.Time.Format("2006-01-02T15:04:05Z"), s.Subject)
			if len(s.Events) > 0 {
				fmt.Fprintf(e.Stdout, ": %s", strings.Join(s.Events, "; "))
			}
			fmt.Fprintln(e.Stdout)
		}
	}
	var lost []string
	total := 0
	for _, m := range r.Machines() {
		lost = append(lost, fmt.Sprintf("%s %d", m, r.Rejected[m]))
		total += r.Rejected[m]
	}
	fmt.Fprintf(e.Stdout, "%d changes on %s %s and %d task refs; pushes that lost a race (replayed or refused, as each machine's log has them): %d (%s)\n",
		len(r.Steps), rc.Remote, remote.StateRef, r.TaskRefs, total, strings.Join(lost, ", "))
	local, _ := safefile.ReadFile(state.Path(dir), state.MaxFileSize)
	if len(r.Steps) > 0 && string(local) == string(r.Final) {
		fmt.Fprintf(e.Stdout, "replayed: the last change is this machine's %s, byte for byte\n", state.FileName)
	} else if len(r.Steps) > 0 {
		fmt.Fprintf(e.Stdout, "replayed: this machine's %s is not the last change yet (a change in flight)\n", state.FileName)
	}
	if len(r.Violations) > 0 {
		for _, v := range r.Violations {
			fmt.Fprintf(e.Stderr, "VIOLATION %s\n", v)
		}
		return ExitNegative
	}
	fmt.Fprintln(e.Stdout, "no task was held by two workers at once, none was integrated twice")
	return ExitOK
}
