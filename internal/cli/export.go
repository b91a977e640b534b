package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/plan"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/state"
)

var exportVerb = &command{
	name:    "export",
	args:    "[--format " + strings.Join(plan.Formats, "|") + "] [--from FILE] [--out FILE]",
	summary: "write the harness's progress in another tool's format: with --from, the plan file (or Backlog.md folder) imported, only the items the harness completed marked done",
	run:     runExport,
}

func runExport(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	format := fs.String("format", "", "the format to write (required without --from; with it, default: the file's)")
	from := fs.String("from", "", "the plan file the tasks were imported from: written back with only the completed items marked done")
	out := fs.String("out", "", "write to this file instead of standard output")
	if err := e.parseNone(c, fs, args); err != nil {
		return e.fail(err)
	}
	if *format == "" && *from == "" {
		return e.fail(usageErr(c, "--format is required without --from"))
	}
	if *format != "" && !slices.Contains(plan.Formats, *format) {
		return e.fail(usageErr(c, "--format takes %s, got %q", strings.Join(plan.Formats, "|"), *format))
	}
	dir, err := e.viewRoot()
	if err != nil {
		return e.fail(err)
	}
	s, err := e.load(dir)
	if err != nil {
		return e.fail(err)
	}
	var text []byte
	var changes []plan.Change
	if *from != "" && isDir(e.path(*from)) {
		return exportDir(e, c, s, dir, *from, *format, *out)
	}
	if *from != "" {
		data, err := safefile.ReadFile(e.path(*from), maxPlanBytes)
		if err != nil {
			return e.fail(failure.Wrap(failure.Config, err, "cannot read %s: %v", *from, err))
		}
		if *format == "" {
			if *format, err = plan.Detect(*from, data); err != nil {
				return e.fail(err)
			}
		}
		verdict := verdicts(s, dir, e.path(*from), *from, func() (*plan.Plan, error) { return plan.Parse(*format, *from, data) })
		if text, changes, err = plan.Patch(*format, *from, data, verdict); err != nil {
			return e.fail(err)
		}
	} else if text, err = plan.Write(*format, s.Tasks); err != nil {
		return e.fail(err)
	}
	if *out == "" {
		e.Stdout.Write(text)
		printChanges(e.Stderr, changes)
		return ExitOK
	}
	path := e.path(*out)
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			// Written beside it and renamed over it, a directory would
			// take the temporary file into its parent and then refuse it.
			return e.fail(failure.New(failure.Usage, "cannot write %s: it is not a file (a directory?)", *out).
				WithHint("name the file to write: --out %s", filepath.Join(*out, "plan."+exportExt(*format))))
		}
		mode = fi.Mode().Perm()
	}
	if err := atomicfile.WriteFile(path, text, mode); err != nil {
		return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot write %s: %v", *out, err))
	}
	printChanges(e.Stdout, changes)
	fmt.Fprintf(e.Stdout, "wrote %s (%s)\n", *out, *format)
	return ExitOK
}

// verdicts is what an export writes of each item of the plan at path
// (name as given; read reads it): its task's verdict (verdictOf). An item
// its import set apart (another plan holds one of its source) is its own
// task's. Only such a task can be one an item is renamed to: without one,
// the plan and the log are not read.
func verdicts(s *state.State, dir, path, name string, read func() (*plan.Plan, error)) func(string) plan.Verdict {
	of := map[string]plan.Verdict{}
	apart := false // a task an import set apart (its source SOURCE@KEY)
	for i := range s.Tasks {
		if t := &s.Tasks[i]; t.Source != "" {
			of[t.Source] = verdictOf(t)
			apart = apart || strings.Contains(t.Source, "@")
		}
	}
	var renamed map[string]string
	if apart {
		if p, err := read(); err == nil {
			_, logged := importLog(dir)
			renamed, _ = apartSources(s, p, dir, path, name, logged)
		}
	}
	return func(src string) plan.Verdict {
		if v, ok := of[renamed[src]]; ok {
			return v
		}
		return of[src]
	}
}

// exportDir writes the harness's progress into the task files of the
// Backlog.md directory from, in place.
func exportDir(e *Env, c *command, s *state.State, dir, from, format, out string) int {
	if format != "" && format != plan.Backlog {
		return e.fail(usageErr(c, "%s is a directory: a %s plan is a file", from, format))
	}
	if out != "" {
		return e.fail(usageErr(c, "an export to a Backlog.md directory writes its task files in place: leave out --out"))
	}
	d, err := readBacklogDir(e.path(from), from)
	if err != nil {
		return e.fail(err)
	}
	verdict := verdicts(s, dir, e.path(from), from, d.parse)
	changes, wrote, notes, err := d.patch(e.path(from), verdict)
	for _, n := range notes {
		fmt.Fprintf(e.Stderr, "WARN [%s] %s\n", failure.Config, n)
	}
	if err != nil {
		return e.fail(err)
	}
	printChanges(e.Stdout, changes)
	fmt.Fprintf(e.Stdout, "wrote %d task file(s) of %s (%s)\n", len(wrote), from, plan.Backlog)
	return ExitOK
}

// verdictOf is what an export writes of task t's item: done only when the
// harness completed it by its own check (a task imported completed was
// never claimed, so has no base commit); back to not done when the
// harness took it up and has not completed it (it failed, or was
// reopened, or is being worked on again); else the file's word stands.
func verdictOf(t *state.Task) plan.Verdict {
	switch {
	case t.Status == state.Completed && t.StartedAtCommit != "":
		return plan.Done
	case t.Status == state.Completed || !started(t) && len(t.ErrorLog) == 0:
		return plan.Leave // a task reopened by retry is pending, its error_log kept
	case t.Status == state.InProgress:
		return plan.InProgress
	}
	return plan.Pending
}

func printChanges(w io.Writer, changes []plan.Change) {
	for _, c := range changes {
		if c.Done {
			fmt.Fprintf(w, "marked done: %s\n", c.Source)
		} else {
			fmt.Fprintf(w, "moved back to not done: %s (its task is not completed in the harness)\n", c.Source)
		}
	}
}

// path is p as the command's working directory sees it.
func (e *Env) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.Cwd, p)
}

// exportExt is the usual file extension of format's files.
func exportExt(format string) string {
	switch format {
	case plan.Markdown:
		return "md"
	case plan.Cursor:
		return "plan.md"
	case plan.Beads:
		return "jsonl"
	}
	return "json"
}
