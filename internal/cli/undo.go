package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/shadow"
)

var undoVerb = &command{
	name:    "undo",
	args:    "[N] [PATH] | --list",
	summary: "put the project (or only PATH) back as at shadow checkpoint N, 1 by default: the newest, taken before the last tool call that changed something; --list shows them with the tool call that followed each; the state before is checkpointed first, so `harness undo 1` takes an undo back (a person's decision: refused inside a Claude Code session)",
	run:     runUndo,
}

func runUndo(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	list := fs.Bool("list", false, "list the shadow checkpoints, newest first, with the tool call that followed each")
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if *list && len(pos) > 0 {
		return e.fail(usageErr(c, "--list takes no argument"))
	}
	n, path := 1, ""
	if len(pos) > 0 {
		if v, err := strconv.Atoi(pos[0]); err == nil {
			if v < 1 {
				return e.fail(usageErr(c, "N counts from 1 (the newest checkpoint), not %d", v))
			}
			n, pos = v, pos[1:]
		}
	}
	if len(pos) > 1 {
		return e.fail(usageErr(c, "unexpected argument %q (one PATH at a time)", pos[1]))
	}
	if err := e.personOnly(c.name); err != nil {
		return e.fail(err)
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	if *list {
		return e.listUndo(dir)
	}
	if len(pos) == 1 {
		if path, err = e.relToRoot(dir, pos[0]); err != nil {
			return e.fail(usageErr(c, "%v", err))
		}
	}
	what := fmt.Sprintf("harness undo %d", n)
	if path != "" {
		what += " " + path
	}
	u, err := shadow.Restore(dir, n, path, what+" (by a person)")
	switch {
	case errors.Is(err, shadow.ErrNone):
		fmt.Fprintln(e.Stderr, "harness: no shadow checkpoints yet: one is taken before each tool call that may change the project while the harness is active")
		return ExitNegative
	case errors.Is(err, shadow.ErrNoPath):
		return e.fail(failure.Wrap(failure.Usage, err, "%v", err).WithHint("`harness undo --list` shows the checkpoints; a path is relative to where you are"))
	case errors.Is(err, shadow.ErrNoCheckpoint):
		return e.fail(failure.Wrap(failure.Usage, err, "%v", err).WithHint("`harness undo --list` shows them"))
	case err != nil:
		return e.fail(failure.Wrap(failure.EnvSetup, err, "undo: %v", err).WithHint("`harness undo --list` shows the checkpoints; nothing was restored if the error came before the restore"))
	}
	target := "the project"
	if path != "" {
		target = path
	}
	msg := fmt.Sprintf("Undo by the user: %s put back as at shadow checkpoint %d (%s, before %s)", target, n, stamp(u.To.Time), u.To.Message)
	progress.Append(dir, progress.Entry{Time: e.Now(), Session: progress.LastSession(dir), Type: progress.Init, Message: msg})
	fmt.Fprintf(e.Stdout, "harness: %s put back as at checkpoint %d (%s, before %s).\n", target, n, stamp(u.To.Time), u.To.Message)
	fmt.Fprintln(e.Stdout, "The state before this undo is checkpoint 1 now: `harness undo 1` takes the undo back.")
	return ExitOK
}

func (e *Env) listUndo(dir string) int {
	ps, err := shadow.List(dir)
	if err != nil {
		return e.fail(failure.Wrap(failure.EnvSetup, err, "undo --list: %v", err))
	}
	if msg := shadow.LastError(dir); msg != "" {
		fmt.Fprintf(e.Stdout, "last failure to take a checkpoint: %s\n", msg)
	}
	if len(ps) == 0 {
		fmt.Fprintln(e.Stdout, "no shadow checkpoints")
		return ExitOK
	}
	for _, p := range ps {
		fmt.Fprintf(e.Stdout, "%3d  %s  before %s\n", p.N, stamp(p.Time), p.Message)
	}
	fmt.Fprintf(e.Stdout, "`harness undo N` puts the project back as at checkpoint N; `harness undo N PATH` only PATH (the %d newest are kept, in %s)\n", shadow.Keep, shadow.Dir(dir))
	return ExitOK
}

// relToRoot makes a path a person typed (relative to the working
// directory) relative to the state root, which the checkpoints hold.
func (e *Env) relToRoot(dir, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.Cwd, p)
	}
	if real, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(real, filepath.Base(p))
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s is outside the project (%s)", p, dir)
	}
	if rel == "." {
		return "", fmt.Errorf("PATH is the whole project: run `harness undo N` without it")
	}
	if root.IsHarnessFile(rel) {
		return "", fmt.Errorf("%s is the harness's own file: the checkpoints never hold it (the verbs change the state)", rel)
	}
	return rel, nil
}
