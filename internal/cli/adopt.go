package cli

import (
	"errors"
	"fmt"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

var adoptVerb = &command{
	name:    "adopt",
	args:    "[--yes]",
	summary: "keep a person's hand edit of harness-tasks.json and harness-init.sh: record the files as they are now as the harness's own (a person's decision: refused inside a Claude Code session, and without a terminal unless --yes)",
	run:     runAdopt,
}

// runAdopt makes the tasks file as it is now the state the harness builds
// on, and harness-init.sh as it is now the script the sessions start with.
// Everywhere else a change the harness did not write is put back (the
// script's is kept at a session's start, but with sessions always running,
// as workers run, there is no start between them); this is the one way a
// person keeps theirs. It is refused to an agent: inside
// a Claude Code session (internal/invoker: the process's environment or
// any ancestor's), and where no person can have typed it (standard input
// is not a terminal) unless --yes says a person's script runs it. It is
// logged with how it was invoked.
func runAdopt(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	yes := fs.Bool("yes", false, "adopt without a terminal (a person's script)")
	if err := e.parseNone(c, fs, args); err != nil {
		return e.fail(err)
	}
	who := e.invoker()
	if who.InSession() {
		return e.fail(failure.New(failure.Usage, "harness adopt is a person's decision and is refused inside a Claude Code session (%s)", who.Session).
			WithHint("change the state with the harness verbs (`harness help`); a person adopts a hand edit by running `harness adopt` in their own terminal"))
	}
	if !*yes && !who.Terminal {
		return e.fail(failure.New(failure.Usage, "harness adopt needs a terminal (a person typing it): standard input is not one").
			WithHint("run it in your terminal, or `harness adopt --yes` from your own script"))
	}
	dir := root.Find(e.Cwd)
	if dir == "" {
		return e.fail(failure.New(failure.Config, "no harness-tasks.json in %s or its parents", e.Cwd).
			WithHint("run `harness init` in the project root"))
	}
	unlock, err := lock.Tx(dir)
	if err != nil {
		return e.fail(failure.Wrap(failure.EnvSetup, err, "%v", err))
	}
	defer unlock()
	raw, err := safefile.ReadFile(state.Path(dir), state.MaxFileSize)
	if err != nil {
		return e.fail(failure.Wrap(failure.EnvSetup, err, "%v", err))
	}
	s, err := state.Parse(raw, state.Path(dir))
	if err != nil {
		why := err.Error()
		if fe := (*failure.Error)(nil); errors.As(err, &fe) {
			why = fe.Message
		}
		return e.fail(failure.Wrap(failure.Config, err, "%s cannot be adopted: %s", state.FileName, why).
			WithHint("fix the file until `harness status` reads it, then adopt it"))
	}
	for _, t := range s.Tasks {
		// What add and edit refuse, adopt refuses too: a task no attempt
		// may run can never be completed.
		if t.MaxAttempts < 1 {
			return e.fail(failure.New(failure.Config, "%s cannot be adopted: %s has max_attempts %d, and a task needs at least one attempt", state.FileName, t.ID, t.MaxAttempts).
				WithHint("give it 1 or more (the default is %d), then adopt the file", state.DefaultMaxAttempts))
		}
	}
	if err := state.Restore(dir, raw); err != nil { // the backup and the record follow the file
		return e.fail(err)
	}
	rec := record.Of(dir)
	rec.SetActive(root.Active(dir))
	was, _ := rec.Mark()
	rec.SaveInit()
	now, _ := rec.Mark()
	script := now.Init != was.Init || now.InitStamp() != was.InitStamp()
	s.Dir = dir
	statecache.Store(s) // the hooks' summary of the adopted file: the next hook need not read it
	how := ""
	if *yes {
		how = "--yes"
	}
	person := e.personLine(dir, "adopt", how)
	person.Session = s.SessionCount
	entries := []progress.Entry{person, {Time: e.Now(), Session: s.SessionCount, Type: progress.Init,
		Message: fmt.Sprintf("Adopted %s as edited by hand (%d tasks)", state.FileName, len(s.Tasks))}}
	if script {
		entries = append(entries, progress.Entry{Time: e.Now(), Session: s.SessionCount, Type: progress.Init,
			Message: "Adopted " + initScriptNote(now)})
	}
	progress.Append(dir, entries...)
	fmt.Fprintf(e.Stdout, "harness adopt: %s (%d tasks) is now the state the harness builds on\n", state.Path(dir), len(s.Tasks))
	if script {
		fmt.Fprintf(e.Stdout, "harness adopt: %s\n", initScriptNote(now))
	}
	return ExitOK
}

// initScriptNote says what adopt recorded of harness-init.sh, its record
// now m.
func initScriptNote(m record.Mark) string {
	if !m.Init {
		return "the removal of " + record.InitCopy + ": the sessions start without one"
	}
	return record.InitCopy + " as it is now: the sessions start with it"
}
