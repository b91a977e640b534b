package sessionhook

import (
	"errors"
	"fmt"
	"strings"

	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/treecache"
)

// recentLines is how many log lines the session context quotes; statsScan is
// how far back it looks for the last STATS line; maxListed is how many lines
// of one kind (recovery, dependency, …) it gives before counting the rest.
const (
	recentLines = 5
	statsScan   = 200
	maxListed   = 5
)

// listed writes one "label: item" line per item, at most maxListed of them,
// then how many more there are and the command that shows them all: the
// context stays readable in seconds however many tasks a failure touched.
func listed(b *strings.Builder, label string, items []string, all string) {
	for i, it := range items {
		if i == maxListed {
			fmt.Fprintf(b, "%s: … and %d more (%s)\n", label, len(items)-maxListed, all)
			return
		}
		fmt.Fprintf(b, "%s: %s\n", label, clip(it, 300))
	}
}

// startContext is the block of text SessionStart gives the model: where the
// job stands and the one thing to do next, readable in seconds. Never the
// whole state.
// view is what startContext reads of the state: its summary and, for the
// one task the next step names, the task itself. A session start that did
// not parse the tasks file gives the cached summary and a one-task lookup.
type view struct {
	sum  *statecache.Summary
	task func(id string) *state.Task
}

// viewOf is the view of a parsed state.
func viewOf(s *state.State) view { return view{sum: statecache.Of(s), task: s.Task} }

// started is what a session start did, for its context.
type started struct {
	source   string
	o        opening
	env      string // harness-init.sh's line, "" without one
	restored bool   // the tasks file was restored from its backup
	held     *lock.Result
	gitFacts <-chan string // the git line, gathered while the state was read
}

func startContext(c *call, v view, st started) string {
	source, o, env, restored, held, gitFacts := st.source, st.o, st.env, st.restored, st.held, st.gitFacts
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	mode := "exclusive"
	if v.sum.Concurrent {
		mode = "concurrent"
		if c.workerID != "" {
			mode += ", worker " + c.workerID
		}
	}
	line("HARNESS SESSION-%d (%s; %s) state root %s", o.n, source, mode, c.Root)
	if held != nil && held.Outcome == lock.Reclaimed {
		line("WARN: Removed stale lock from pid=%d", held.Stale.PID)
	}
	if v.sum.Concurrent && c.workerID == "" {
		line("WARN: concurrent mode without HARNESS_WORKER_ID: set a stable id per worker, claims are recorded under it.")
	}
	if restored {
		line("WARN: harness-tasks.json was corrupt and has been restored from harness-tasks.json.bak (the corrupt copy is kept beside it); check that recent work is recorded.")
	}
	line("tasks: %s", v.sum.Stats.Counts())
	if o.overLimit {
		line("STOP: session_config.max_sessions=%d is reached (this is session %d). Start no harness work; tell the user. To go on, raise max_sessions in harness-tasks.json.", v.sum.Config.MaxSessions, o.n)
		return b.String()
	}
	if len(o.overBudget) > 0 {
		line("STOP budget %s. Start no harness work; tell the user. A person raises the limit (`harness budget --help`) to go on.", budget.Join(o.overBudget))
		return b.String()
	}
	w := remaining(v.sum, c.now, c.ids()...)
	if w.next != nil {
		line("next=%s", describe(w.next.ID, w.next.Title))
	} else {
		line("next=none (%s)", v.sum.Why)
	}
	listed(&b, "recovery", o.recovered, "harness status")
	listed(&b, "dependency", o.blocked, "harness status")
	listed(&b, "RECOVER FIRST", o.toRecover, "harness recover --dry-run")
	if len(o.toRecover) > 0 {
		line("do now: run `%s` (it carries out the recovery decision matrix for the task(s) above; `harness recover --dry-run` shows what it would do)", recoverCmd)
	}
	if len(o.toRecover) == 0 {
		if todo := nextStep(w, detailsBy(v.task)); todo != "" {
			line("do now: %s", todo)
		} else if v.sum.Stats.Total == 0 {
			line("no tasks yet: add them with `harness add \"TITLE\" --validate \"COMMAND\"` (a command that exits 0 when the task is done).")
		} else {
			line("nothing eligible for this session: when nothing is in progress either, the run is over.")
		}
	}
	if env != "" {
		line("%s", env)
	}
	line("%s", <-gitFacts)
	recent, _ := progress.Tail(c.Root, statsScan)
	for i := len(recent) - 1; i >= 0; i-- {
		if strings.Contains(recent[i], "] "+progress.Stats+" ") {
			line("last STATS: %s", clip(recent[i], 240))
			break
		}
	}
	if len(recent) > recentLines {
		recent = recent[len(recent)-recentLines:]
	}
	if len(recent) > 0 {
		line("recent log:")
		for _, l := range recent {
			line("  %s", clip(l, 200))
		}
	}
	b.WriteString(reminder)
	return b.String()
}

// ReadHead reads HEAD's line from the repository's files (gitobj.HeadLine),
// ok false where they do not say it for certain. The session-start
// executable sets it: the other session hooks then do not link the object
// store's reading, whose compression tables are built at every start.
var ReadHead func(dir string) (line string, ok bool)

// gitLine is HEAD and whether the tree is dirty, in one line. HEAD is read
// from the repository's files where they say it for certain (ReadHead),
// from `git log` otherwise; whether the tree is dirty is `git status`'s
// answer, or the answer it gave last time (kept in the file kept) when no
// file it rests on has changed since (treecache). The session start has
// found git before it asks (SessionStart's noGit).
func gitLine(dir, stateRoot, kept string) string {
	if _, err := git.Top(dir); errors.Is(err, git.ErrNoRepository) {
		return "git: not a repository (run `git init` and commit a baseline: the harness rolls back to commits)"
	}
	changes := make(chan error, 1)
	var paths []string
	go func() {
		var err error
		paths, err = treecache.Changes(dir, stateRoot, kept)
		changes <- err
	}()
	head, ok := "", false
	if ReadHead != nil {
		head, ok = ReadHead(dir)
	}
	var err error
	if !ok {
		head, err = git.Run(dir, "log", "-1", "--format=%h %s")
	}
	if err != nil {
		if !git.Available() {
			return "git: not installed (the harness needs git as its checkpoint store)"
		}
		if _, terr := git.Run(dir, "rev-parse", "--git-dir"); terr != nil {
			return "git: not a repository (run `git init` and commit a baseline: the harness rolls back to commits)"
		}
		return "git: no commits yet (commit a baseline first)"
	}
	tree := "clean"
	switch err := <-changes; {
	case err != nil:
		tree = "unknown"
	case len(paths) > 0:
		tree = fmt.Sprintf("dirty (%d changed: %s)", len(paths), clip(strings.Join(paths, " "), 120))
	}
	return fmt.Sprintf("git: HEAD %s; tree %s", clip(head, 100), tree)
}
