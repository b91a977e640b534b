// Package cli implements the harness command: every step of the protocol as a
// deterministic verb, so an agent never edits the state files by hand.
//
// Exit codes: 0 success; 1 a negative outcome the caller acts on (nothing
// eligible, validation failed); 2 a usage, configuration or environment error.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/invoker"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/shortlived"
	"github.com/harness-agent/harness/internal/state"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitNegative = 1
	ExitError    = 2
)

// Env is what a verb may touch of the outside world.
type Env struct {
	Stdout, Stderr io.Writer
	Now            func() time.Time
	Cwd            string

	who *invoker.Invoker // who runs the command, found once (invoker)
	// fromRemote: status --remote, the state brought from the job's remote first.
	fromRemote bool
	person     string   // a person-only verb accepted, logged by stateRoot
	cmd        *command // the verb running (Run)
	viewing    bool     // the verb only reads (viewRoot): a hold does not refuse it
}

// command is one verb.
type command struct {
	name    string
	args    string // usage after the verb
	summary string
	run     func(e *Env, c *command, args []string) int
	// view: the verb only shows the state (it may sync or check it), so
	// a paused or cancelled run does not refuse it (heldBack).
	view bool
}

// verbs is every verb of the harness command, in the order of the work (set
// up, plan, look, the task cycle, then the rest): the order help lists
// them in. Each verb's file declares its command next to its run function.
var verbs = []*command{initVerb, addVerb, editVerb, removeVerb, importVerb, statusVerb, graphVerb, reportVerb, exportVerb, nextVerb,
	claimVerb, checkpointVerb, validateVerb, integrateVerb, failVerb, renewVerb, recoverVerb, retryVerb, pauseVerb, resumeVerb, cancelVerb,
	workersVerb, historyVerb, budgetVerb, configVerb, snapshotsVerb, undoVerb, statsVerb, sessionVerb, mcpVerb, adoptVerb, installVerb, hooksVerb, versionVerb}

// versionVerb is `harness version`, the one verb that needs no state (the
// skill runs it to see whether the harness is installed).
var versionVerb = &command{
	name: "version", summary: versionSummary,
	run: func(e *Env, _ *command, _ []string) int {
		fmt.Fprintln(e.Stdout, versionLine())
		return ExitOK
	}}

// lookup returns the verb called name.
func lookup(name string) (*command, bool) {
	for _, c := range verbs {
		if c.name == name {
			return c, true
		}
	}
	return nil, false
}

// usage is the verb's synopsis: "harness NAME ARGS", without a trailing
// space for a verb that takes none.
func (c *command) usage() string { return strings.TrimSpace("harness " + c.name + " " + c.args) }

// Main runs the harness command with args (without the program name).
func Main(args []string) int {
	shortlived.Tune()
	cwd, _ := os.Getwd()
	e := &Env{Stdout: os.Stdout, Stderr: os.Stderr, Now: time.Now, Cwd: cwd}
	return e.Run(args)
}

// Run dispatches args to a verb.
func (e *Env) Run(args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if args[1] == "version" {
				fmt.Fprintf(e.Stdout, "usage: harness version\n\n%s\n", versionSummary)
				return ExitOK
			}
			if c, ok := lookup(args[1]); ok {
				return c.run(e, c, []string{"--help"})
			}
			if args[1] != "help" {
				return e.unknownVerb(args[1])
			}
		}
		e.usage(e.Stdout)
		if len(args) == 0 {
			return ExitError
		}
		return ExitOK
	}
	if args[0] == "--version" {
		args[0] = "version"
	}
	c, ok := lookup(args[0])
	if !ok {
		return e.unknownVerb(args[0])
	}
	e.cmd = c
	return c.run(e, c, args[1:])
}

// Version is set at build time with -ldflags "-X …cli.Version=…".
var Version = "dev"

// Commit, when set at build time (scripts/release.sh, whose reproducible
// builds record no VCS information), is the commit `harness version` names.
var Commit = ""

// versionSummary is the help line of `harness version`, the one verb that
// needs no state (the skill runs it to see whether the harness is installed).
const versionSummary = "print the harness version (also --version)"

func (e *Env) usage(w io.Writer) {
	fmt.Fprintln(w, "harness: keeps a long-running agent job on track across sessions.")
	fmt.Fprintln(w, "\nusage: harness <command> [arguments]\n\ncommands:")
	for _, c := range verbs {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun `harness help <command>` for a command's arguments.")
	fmt.Fprintln(w, "Exit codes: 0 ok, 1 negative outcome (nothing eligible, validation failed), 2 usage/config/environment error.")
}

// flags makes the flag set of verb c; its Usage prints the verb's help to
// stdout (parse calls it for -h/--help only).
func (e *Env) flags(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet("harness "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { e.printHelp(c, fs) }
	return fs
}

// errHelp is returned by parse when --help was asked for and printed.
var errHelp = errors.New("help")

// parse parses flags interspersed with positional arguments and returns the
// positional ones. The help goes to stdout only when asked for: the flag
// package would print it on every error too, and a `--json` caller reading
// stdout must get nothing but its JSON or nothing at all.
func (e *Env) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	usage := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = usage }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return nil, errHelp
			}
			return nil, flagErr(fs, err)
		}
		if err := flagAsValue(fs); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// flagAsValue refuses a flag whose value is another of the verb's flags:
// `--validate --priority P1` gave --validate the value "--priority" (the
// flag package takes the next argument whatever it is) and left P1 a
// second title; `add "--validate" --validate true` made a task "true"
// checked by "--validate". A value that is a flag's name is a value left
// out, never one meant.
func flagAsValue(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		v := f.Value.String()
		name, _, _ := strings.Cut(strings.TrimLeft(v, "-"), "=")
		if err != nil || !strings.HasPrefix(v, "-") || name == "" || fs.Lookup(name) == nil {
			return
		}
		err = failure.New(failure.Usage, "--%s was given the flag %s as its value", f.Name, v).
			WithHint("give --%s its value (quoted when it has spaces), or leave it out; run `%s --help`", f.Name, fs.Name())
	})
	return err
}

// parseNone parses the flags of a verb that takes no positional argument,
// and refuses one.
func (e *Env) parseNone(c *command, fs *flag.FlagSet, args []string) error {
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr(c, "unexpected argument %q", pos[0])
	}
	return nil
}

// fail reports err in the harness's one-line format and returns its exit code.
func (e *Env) fail(err error) int {
	if errors.Is(err, errHelp) {
		return ExitOK
	}
	var fe *failure.Error
	if !errors.As(err, &fe) {
		fe = failure.Wrap(failure.EnvSetup, err, "%v", err)
	}
	fmt.Fprintln(e.Stderr, fe.Text())
	if state.IsUnrecoverable(fe) {
		e.logUnrecoverable(fe)
	}
	switch fe.Category {
	case failure.Usage, failure.Config, failure.EnvSetup:
		return ExitError
	}
	return ExitNegative
}

// logUnrecoverable appends the protocol's "ERROR [ENV_SETUP] harness-tasks.json
// corrupted and unrecoverable" to the progress log, as the protocol says to
// before stopping. The verbs do it, not state.Load: the hooks read the state
// on every tool call and log their own outcome. A verb retried against the
// same broken file logs it once, not once per try.
func (e *Env) logUnrecoverable(fe *failure.Error) {
	dir := root.Find(e.Cwd)
	if dir == "" {
		return
	}
	entry := progress.Entry{Time: e.Now(), Session: progress.LastSession(dir), Type: progress.Error, Category: fe.Category, Message: fe.Message}
	if last, _ := progress.Tail(dir, 1); len(last) == 1 && strings.HasSuffix(last[0], "] "+progress.Error+" ["+fe.Category+"] "+fe.Message) {
		return
	}
	progress.Append(dir, entry)
}

// usageErr is a failure for wrong arguments to verb c.
func usageErr(c *command, format string, args ...any) error {
	return failure.New(failure.Usage, format, args...).WithHint("usage: %s", c.usage())
}

// noTask is the error for an id that names no task, the same from every
// verb that takes ids.
func noTask(s *state.State, id string) error {
	return failure.New(failure.Config, "no task %q", id).WithHint("%s", s.IDHint(id))
}

// stateRoot finds the state root from the working directory, for a verb
// that saves.
func (e *Env) stateRoot() (string, error) {
	dir, err := e.findRoot()
	if err != nil {
		return "", err
	}
	// Every verb builds on the state the harness wrote, whoever runs it: a
	// change made outside it since is put back first, and said, so that
	// the verb's own write does not make it the harness's. A person keeps
	// a deliberate hand edit with `harness adopt`, in a terminal.
	// The change a verb of the same command line made where it could not
	// write the record (the sandbox) is legal and kept (integrity.Legal).
	p := project.Open(dir)
	if res := integrity.Check(p, "a writer outside the harness", integrity.Legal(p)); res.Tampered() {
		fmt.Fprintln(e.Stderr, res.Message())
		fmt.Fprintf(e.Stderr, "hint: a deliberate hand edit is kept with `harness adopt`, run by a person in a terminal\n")
	}
	if err := e.heldBack(dir); err != nil {
		return "", err
	}
	e.logPerson(dir)
	return dir, nil
}

// viewRoot finds the state root for a verb that only reads (status, graph,
// report, budget without flags): it cannot make a change the harness's own, so a
// person sees the file as they left it (a hand edit they may then adopt).
// Inside a session the check runs, as at every hook.
func (e *Env) viewRoot() (string, error) {
	e.viewing = true
	dir, err := e.findRoot()
	if err != nil || !e.invoker().InSession() {
		return dir, err
	}
	return e.stateRoot()
}

func (e *Env) findRoot() (string, error) {
	dir := integrity.Root(e.Cwd)
	if dir == "" {
		return "", failure.New(failure.Config, "no harness-tasks.json in %s or its parents", e.Cwd).
			WithHint("run `harness init` in the project root, or set HARNESS_STATE_ROOT")
	}
	return dir, nil
}

// stamp formats t as the protocol's timestamps.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// closest returns the verb a mistyped name most likely meant: within two
// edits (a swap of neighbours counts as one), "" when none is that near.
func closest(name string) string {
	best, bestD := "", 3
	for _, c := range verbs {
		if d := editDistance(name, c.name); d < bestD {
			best, bestD = c.name, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// versionLine is `harness version`'s answer: the version, then the commit it
// was built from (when the build recorded one) and the platform, so a bug
// report names exactly what ran.
func versionLine() string {
	commit := "unknown"
	if Commit != "" {
		commit = Commit
	} else if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 7 {
				commit = s.Value[:7]
			}
			if s.Key == "vcs.modified" && s.Value == "true" && commit != "unknown" {
				commit += "+dirty"
			}
		}
	}
	return fmt.Sprintf("harness %s (commit %s, %s/%s, %s)", Version, commit, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// optionalTarget parses a verb's flags and its one optional task ID
// argument ("" when none is given), and finds the state root the verb acts
// on.
func (e *Env) optionalTarget(c *command, fs *flag.FlagSet, args []string) (id, dir string, err error) {
	pos, err := e.parse(fs, args)
	if err != nil {
		return "", "", err
	}
	if len(pos) > 1 {
		return "", "", usageErr(c, "expected at most one task ID")
	}
	if len(pos) == 1 {
		id = pos[0]
	}
	dir, err = e.stateRoot()
	return id, dir, err
}
