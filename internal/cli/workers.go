package cli

import (
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/workers"
)

var workersVerb = &command{
	name: "workers",
	args: "N [-- CLAUDE-ARGS...] | stop ID",
	summary: "run N agents on the job, each in its own git worktree with one headless Claude Code session at a time, " +
		"their validated work integrated by the merge queue; `workers stop ID` stops one (a person's decision: refused inside a Claude Code session)",
	run: runWorkers,
}

var integrateVerb = &command{
	name:    "integrate",
	args:    "[--wait DURATION]",
	summary: "run the merge queue now: rebase each validated task onto the integration branch, validate it again there (and session_config.integration_check), then fast-forward the branch",
	run:     runIntegrate,
}

func runWorkers(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	var claudeArgs []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, claudeArgs = args[:i], args[i+1:]
	}
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if err := e.personOnly("workers"); err != nil {
		return e.fail(err)
	}
	if len(pos) == 2 && pos[0] == "stop" {
		return e.stopWorker(pos[1])
	}
	if len(pos) != 1 {
		return e.fail(usageErr(c, "expected the number of workers (harness workers 3), then -- and claude's arguments"))
	}
	n, err := strconv.Atoi(pos[0])
	if err != nil || n < 1 || n > 64 {
		return e.fail(usageErr(c, "the number of workers must be a whole number from 1 to 64, got %q", pos[0]))
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	e.logPerson(dir)
	claude, err := exec.LookPath(claudeProgram())
	if err != nil {
		return e.fail(failure.New(failure.EnvSetup, "cannot run workers: %s is not on PATH", claudeProgram()).
			WithHint("install Claude Code, or set HARNESS_CLAUDE to its path"))
	}
	ctx, stop := interruptible()
	defer stop()
	why, err := workers.Run(ctx, workers.Options{Root: dir, N: n, Claude: claude, Args: claudeArgs, Out: e.Stdout, Now: e.Now})
	if err != nil {
		return e.fail(err)
	}
	if strings.HasPrefix(why, "job done") {
		return ExitOK
	}
	return ExitNegative
}

// stopWorker asks the running supervisor to stop one worker.
func (e *Env) stopWorker(id string) int {
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	st, live, ok := workers.ReadStatus(dir)
	if !ok || !live {
		return e.fail(failure.New(failure.Usage, "no `harness workers` is running for this job").WithHint("`harness status` shows the workers of the last run"))
	}
	known := false
	for _, w := range st.Workers {
		known = known || w.ID == id
	}
	if !known {
		return e.fail(failure.New(failure.Usage, "no worker %q in the running supervisor (pid %d)", id, st.PID).WithHint("`harness status` lists them"))
	}
	e.logPerson(dir)
	if err := workers.RequestStop(dir, id); err != nil {
		return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot ask the supervisor to stop %s: %v", id, err))
	}
	fmt.Fprintf(e.Stdout, "asked the supervisor (pid %d) to stop %s: its session ends and its claim is released within a few seconds\n", st.PID, id)
	return ExitOK
}

func runIntegrate(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	wait := fs.Duration("wait", 30*time.Minute, "how long to wait for an integration already running")
	if err := e.parseNone(c, fs, args); err != nil {
		return e.fail(err)
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	ctx, stop := interruptible()
	defer stop()
	done, err := e.worker(dir).Integrate(ctx, *wait)
	code := ExitOK
	for _, in := range done {
		if f := in.Failure; f != nil {
			fmt.Fprintf(e.Stderr, "ERROR [%s] [%s] %s\n", in.Task.ID, f.Category, f.Message)
			if in.Check != nil {
				e.printTail(in.Check)
			}
			code = ExitNegative
			continue
		}
		fmt.Fprintf(e.Stdout, "integrated %s as %s\n", in.Task.ID, git.Short(in.Merged))
	}
	if err != nil {
		return e.failCycle(err)
	}
	if len(done) == 0 {
		fmt.Fprintln(e.Stdout, "the merge queue is empty")
	}
	return code
}
