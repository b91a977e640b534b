package cli

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/guard"
	"github.com/harness-agent/harness/internal/plan"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/taskcycle"
	"github.com/harness-agent/harness/internal/validation"
)

var addVerb = &command{
	name:    "add",
	args:    `TITLE [--id ID] [--priority P0|P1|P2] [--depends-on ID,…] [--validate CMD] [--timeout SECONDS] [--max-attempts N] [--cleanup CMD] [--allowed-paths GLOB,…] [--accept TEXT] [--review]`,
	summary: "append a task (auto id task-NNN) and print its id",
	run:     runAdd,
}

func runAdd(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	id := fs.String("id", "", "task id (default: the next task-NNN)")
	priority := fs.String("priority", "P1", "P0 (highest), P1 or P2")
	deps := fs.String("depends-on", "", "comma-separated ids of tasks that must complete first")
	validate := fs.String("validate", "", "shell command that exits 0 when the task is done (required to complete it)")
	timeout := fs.Int("timeout", state.DefaultTimeoutSeconds, "validation timeout in seconds")
	maxAttempts := fs.Int("max-attempts", state.DefaultMaxAttempts, "attempts before the task fails permanently")
	cleanup := fs.String("cleanup", "", "shell command run after a failed attempt (on_failure.cleanup)")
	allowed := fs.String("allowed-paths", "", "comma-separated globs the task may write (scope lock)")
	var accept criteria
	fs.Var(&accept, "accept", "an acceptance criterion a person checks besides the validation (repeat for more)")
	reviewed := fs.Bool("review", false, "a reviewer judges the work after the validation passes (review: true; a person turns it off with `harness edit ID --review off`)")
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) == 1 && strings.TrimSpace(pos[0]) == "" {
		return e.fail(usageErr(c, "the TITLE is empty: a task needs words that say what it is"))
	}
	if len(pos) != 1 {
		return e.fail(usageErr(c, "expected exactly one TITLE (quote it)"))
	}
	p, ok := priorityOf(*priority)
	if !ok {
		return e.fail(usageErr(c, "--priority must be P0, P1 or P2, got %q", *priority))
	}
	*priority = p
	if *timeout <= 0 || *maxAttempts <= 0 {
		return e.fail(usageErr(c, "--timeout and --max-attempts must be positive"))
	}
	if *id = strings.TrimSpace(*id); *id != "" {
		if err := state.CheckID(*id); err != nil {
			return e.fail(err)
		}
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	if err := checkStored(dir, e.Cwd, map[string]string{"validate": *validate, "cleanup": *cleanup}); err != nil {
		return e.fail(err)
	}
	t := state.Task{
		ID: *id, Title: strings.TrimSpace(pos[0]), Status: state.Pending, Priority: *priority,
		DependsOn: splitList(*deps), MaxAttempts: *maxAttempts, Command: strings.TrimSpace(*validate),
		TimeoutSeconds: *timeout, Cleanup: strings.TrimSpace(*cleanup), AllowedPaths: splitListOrNil(*allowed),
		Acceptance: accept.list(),
	}
	if *reviewed {
		t.Review = state.ReviewOn
	}
	var deadDeps []string
	_, err = statecache.Update(dir, func(s *state.State) error {
		if t.ID == "" {
			t.ID = nextID(s, loggedIDs(dir))
		} else if s.Task(t.ID) != nil {
			return failure.New(failure.Config, "a task with id %q exists already", t.ID).WithHint("pick another --id, or omit it for an automatic one")
		}
		for _, d := range t.DependsOn {
			if d == t.ID {
				return failure.New(failure.Config, "task %s cannot depend on itself", t.ID)
			}
			if s.Task(d) == nil {
				return failure.New(failure.Config, "unknown dependency %q", d).WithHint("%s", s.IDHint(d))
			}
			if dep := s.Task(d); dep.PermanentlyFailed() {
				deadDeps = append(deadDeps, d)
			}
		}
		s.AddTask(t)
		// Tasks written by hand may name an id before it exists.
		if err := checkDependsOn(s, t.ID); err != nil {
			return err
		}
		// INIT is a session-level type: the protocol gives it no [task-id].
		return progress.Append(dir, progress.Entry{Time: e.Now(), Session: s.SessionCount, Type: progress.Init,
			Message: fmt.Sprintf("Task added: %s (id=%s priority=%s depends_on=%s)", t.Title, t.ID, t.Priority, strings.Join(t.DependsOn, ","))})
	})
	if err != nil {
		return e.fail(err)
	}
	fmt.Fprintln(e.Stdout, t.ID)
	for _, d := range deadDeps {
		fmt.Fprintf(e.Stderr, "WARN [%s] %s depends on %s, which failed for good: %s will be marked blocked and never run until a person changes the plan (harness edit %s --depends-on …)\n", failure.Dependency, t.ID, d, t.ID, failure.ShellArg(t.ID))
	}
	e.warnMissingProgram(dir, t.ID, t.Command)
	if t.Command == "" {
		fmt.Fprintf(e.Stderr, "WARN [%s] %s has no validation command: it cannot be claimed or completed until one is set (%s)\n", failure.Config, t.ID, taskcycle.CheckCommand(t.ID))
	}
	return ExitOK
}

// nextID returns task-NNN one above the highest automatic id in use, and
// above logged, the highest the log shows was ever given out: a task lost
// with a state file restored by hand must not lend its id to another.
func nextID(s *state.State, logged int) string {
	max := logged
	for _, t := range s.Tasks {
		if n := autoNumber(t.ID); n > max {
			max = n
		}
	}
	return fmt.Sprintf("task-%03d", max+1)
}

// idCounter hands out nextID's ids one after the other, for the many
// tasks one change adds: nextID for each would scan every task each time.
func idCounter(s *state.State, logged int) func() string {
	max := logged
	for _, t := range s.Tasks {
		if n := autoNumber(t.ID); n > max {
			max = n
		}
	}
	return func() string {
		max++
		return fmt.Sprintf("task-%03d", max)
	}
}

// autoNumber returns NNN of an automatic id task-NNN, 0 for any other id.
func autoNumber(id string) int {
	// An automatic id is task- and digits only (Atoi would take a sign).
	if digits, ok := strings.CutPrefix(id, "task-"); ok && digits != "" && strings.Trim(digits, "0123456789") == "" {
		if n, err := strconv.Atoi(digits); err == nil {
			return n
		}
	}
	return 0
}

// addedMark precedes the id in the log's "Task added: … (id=ID …)" lines.
const addedMark = "(id=task-"

// loggedIDs returns the highest NNN of an automatic id the log shows was
// given out, reading it in chunks (the log grows to tens of megabytes).
func loggedIDs(dir string) int {
	f, err := safefile.Open(progress.Path(dir))
	if err != nil {
		return 0
	}
	defer f.Close()
	max := 0
	buf := make([]byte, 1<<20)
	keep := 0 // bytes carried over from the last chunk: a mark may straddle two
	for {
		n, err := f.Read(buf[keep:])
		data := buf[:keep+n]
		for i := 0; ; {
			j := bytes.Index(data[i:], []byte(addedMark))
			if j < 0 {
				break
			}
			start := i + j + len(addedMark) - len("task-")
			end := start + len("task-")
			for end < len(data) && data[end] >= '0' && data[end] <= '9' {
				end++
			}
			if end == len(data) && err == nil {
				break // the number may go on in the next chunk
			}
			if m := autoNumber(string(data[start:end])); m > max {
				max = m
			}
			i = end
		}
		if err != nil {
			return max
		}
		keep = min(len(data), 64)
		copy(buf, data[len(data)-keep:])
	}
}

// priorityOf reads a priority as a person types it: P0, P1 or P2 in
// either case, or the words the importers read as them (plan.PriorityWord:
// critical and high P0, medium P1, low P2).
func priorityOf(s string) (string, bool) {
	switch p := strings.ToUpper(strings.TrimSpace(s)); p {
	case "P0", "P1", "P2":
		return p, true
	}
	return plan.PriorityWord(s)
}

// splitList reads a comma-separated flag value (ids, globs): each item
// once, in the order given (`--depends-on task-001,task-001` is one
// dependency, not an edge drawn twice).
func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func splitListOrNil(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return splitList(s)
}

// checkStored reads the commands given for the harness to run later (by
// flag name: validate, cleanup) with the guard's Bash analysis, so that a
// policy the project set cannot be side-stepped by storing a command.
func checkStored(dir, cwd string, cmds map[string]string) error {
	for _, flag := range []string{"validate", "cleanup"} {
		cmd, ok := cmds[flag]
		if !ok {
			continue
		}
		if why := guard.StoredCommand(dir, cwd, cmd); why != "" {
			return failure.New(failure.Config, "--%s %q refused: %s", flag, strings.TrimSpace(cmd), why).
				WithHint("give a command that only checks (or cleans up) the work, with programs from session_config.allowed_commands when it is set")
		}
	}
	return nil
}

// criteria is a repeatable flag's values: the acceptance criteria given
// with --accept, one a flag.
type criteria []string

func (c *criteria) String() string { return strings.Join(*c, "; ") }

func (c *criteria) Set(v string) error {
	*c = append(*c, v)
	return nil
}

// list is the criteria without the empty ones, nil when none is left.
func (c criteria) list() []string {
	var out []string
	for _, v := range c {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// warnMissingProgram warns, when a task is given its validation command,
// that the program the command runs first is not installed here: the task
// is kept (harness-init.sh may install it before the work starts), but
// `harness validate` would refuse it until then.
func (e *Env) warnMissingProgram(dir, id, command string) {
	if strings.TrimSpace(command) == "" {
		return
	}
	if prog, ok := validation.Check(dir, command); !ok {
		fmt.Fprintf(e.Stderr, "WARN [%s] %s's validation runs %s, which is not installed here (not on PATH): `harness validate %s` refuses to run it until it is (install it, or have harness-init.sh do it)\n",
			failure.EnvSetup, id, prog, failure.ShellArg(id))
	}
}
