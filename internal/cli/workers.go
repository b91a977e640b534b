package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/remote"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/settings"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/workers"
)

var workersVerb = &command{
	name: "workers",
	args: "N [--remote NAME [--machine NAME]] [-- CLAUDE-ARGS...] | stop ID",
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
	remoteName := fs.String("remote", "", "share the job through the git remote `NAME`: publish it there from the machine that holds it, join it from any other clone")
	machine := fs.String("machine", "", "this machine's `NAME` in a job shared with --remote (default: the host name and this clone's id, host.abc123)")
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
	var rc *remote.Config
	if *remoteName != "" {
		if *machine != "" {
			if why := remote.ValidMachine(*machine); why != "" {
				return e.fail(usageErr(c, "%s", why))
			}
		}
		rc = &remote.Config{Remote: *remoteName, Machine: *machine}
	} else if *machine != "" {
		return e.fail(usageErr(c, "--machine names this machine in a job shared with --remote"))
	}
	// At the sandboxed level a worker's commands cannot write the job's
	// state or the main repository: its task cycle goes through the
	// harness's MCP server, which Claude Code runs outside the sandbox.
	mcpServer := ""
	if cwd, werr := os.Getwd(); werr == nil && trustLevelOf(cwd).Level == settings.Sandboxed {
		exe, err := os.Executable()
		if err != nil {
			return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot find the harness executable for the workers' MCP server: %v", err))
		}
		mcpServer = exe
	}
	dir, err := e.stateRoot()
	if err != nil && rc != nil {
		dir, err = e.joinRemote(rc, n)
	} else if err == nil && rc != nil {
		err = publishRemote(dir, rc, n, e.Now())
	}
	if err != nil {
		return e.fail(err)
	}
	if rc == nil {
		if cur, ok := remote.Load(dir); ok {
			rc = &cur // a shared job stays shared
			if rc.Clone == "" {
				// Shared before clones had ids: this one gets its own now.
				if err := nameMachine(dir, rc); err != nil {
					return e.fail(err)
				}
				if err := remote.Save(dir, *rc); err != nil {
					return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot record the remote: %v", err))
				}
			}
		}
	}
	e.logPerson(dir)
	claude, err := exec.LookPath(claudeProgram())
	if err != nil {
		return e.fail(failure.New(failure.EnvSetup, "cannot run workers: %s is not on PATH", claudeProgram()).
			WithHint("install Claude Code, or set HARNESS_CLAUDE to its path"))
	}
	ctx, stop := interruptible()
	defer stop()
	why, err := workers.Run(ctx, workers.Options{Root: dir, N: n, Claude: claude, Args: claudeArgs, Out: e.Stdout, Now: e.Now, Shared: rc, MCP: mcpServer})
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

// publishRemote shares the job of dir through rc: the next change of the
// state publishes it on the remote. A remote that holds another job
// already is not overwritten.
func publishRemote(dir string, rc *remote.Config, n int, now time.Time) error {
	if err := nameMachine(dir, rc); err != nil {
		return err
	}
	if _, err := git.Run(dir, "remote", "get-url", rc.Remote); err != nil {
		return failure.New(failure.Usage, "this repository has no remote %q", rc.Remote).
			WithHint("add it first (`git remote add %s URL`), or name one `git remote -v` lists", rc.Remote)
	}
	branch := git.CurrentBranch(dir)
	heads, err := rc.Fetch(dir, "refs/heads/"+branch, remote.MachineRefs)
	if err != nil {
		return failure.Wrap(failure.EnvSetup, err, "cannot reach the remote %s: %v", rc.Remote, err)
	}
	// Every machine starts from the remote's branch: this one's commits
	// must be there first.
	if local, theirs := git.Head(dir), heads["refs/heads/"+branch]; branch != "" && (theirs == "" || !git.IsAncestor(dir, local, theirs)) {
		return failure.New(failure.Usage, "the remote %s does not have this main tree's branch %s as it is here", rc.Remote, branch).
			WithHint("push it first: git push %s %s", rc.Remote, branch)
	}
	if err := workers.CheckName(dir, *rc, n, now); err != nil {
		return err
	}
	if cur, ok := remote.Load(dir); ok && cur == *rc {
		return nil
	}
	if head := heads[remote.StateRef]; head != "" && remote.ReadSynced(dir).Commit == "" {
		theirs, _ := state.Composed(dir)
		mine, _ := safefile.ReadFile(state.Path(dir), state.MaxFileSize)
		if string(theirs) != string(mine) {
			return failure.New(failure.Usage, "the remote %s already holds a job (%s %s), not this one", rc.Remote, remote.StateRef, git.Short(head)).
				WithHint("to join it, move this clone's %s and %s aside and run this again; to replace it, delete it first: git push %s :%s", state.FileName, progress.FileName, rc.Remote, remote.StateRef)
		}
	}
	return remote.Save(dir, *rc)
}

// nameMachine gives rc this clone's id and, when the person named none,
// the machine's name: the one this clone had in the job, else the host's
// name and the clone's id (remote.DefaultMachine).
func nameMachine(dir string, rc *remote.Config) error {
	clone, err := remote.CloneID(dir)
	if err != nil {
		return failure.Wrap(failure.EnvSetup, err, "cannot give this clone an id: %v", err).
			WithHint("the record directory %s must be writable (set HARNESS_RECORD_DIR to move it)", record.Base())
	}
	rc.Clone = clone
	if rc.Machine == "" {
		if cur, ok := remote.Load(dir); ok && cur.Remote == rc.Remote {
			rc.Machine = cur.Machine
		} else {
			rc.Machine = remote.DefaultMachine(clone)
		}
	}
	return nil
}

// joinRemote makes the clone the command runs in a machine of the job
// shared through rc: the tasks file as the remote has it, a progress log
// of this machine's own, the hooks switched on, the harness files kept out
// of git. It returns the state root (the clone's top).
func (e *Env) joinRemote(rc *remote.Config, n int) (string, error) {
	top, err := git.Top(e.Cwd)
	if err != nil {
		return "", failure.New(failure.Usage, "no job here to share, and no git clone to join one from: %v", err).
			WithHint("run it in a clone of the project whose remote %s holds the job", rc.Remote)
	}
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	if err := nameMachine(top, rc); err != nil {
		return "", err
	}
	heads, err := rc.Fetch(top, remote.MachineRefs)
	if err != nil {
		return "", failure.Wrap(failure.EnvSetup, err, "cannot reach the remote %s: %v", rc.Remote, err)
	}
	head := heads[remote.StateRef]
	if head == "" {
		return "", failure.New(failure.Usage, "the remote %s holds no job (no %s)", rc.Remote, remote.StateRef).
			WithHint("publish it from the machine that holds it: harness workers N --remote %s", rc.Remote)
	}
	data, err := state.Composed(top)
	if err != nil {
		return "", err
	}
	if _, err := state.Parse(data, state.Path(top)); err != nil {
		return "", err
	}
	if err := workers.CheckName(top, *rc, n, e.Now()); err != nil {
		return "", err
	}
	if err := remote.Save(top, *rc); err != nil {
		return "", failure.Wrap(failure.EnvSetup, err, "cannot record the remote: %v", err)
	}
	if err := state.Materialize(top); err != nil {
		return "", err
	}
	progress.Append(top, progress.Entry{Time: e.Now(), Type: progress.Init,
		Message: fmt.Sprintf("machine %s joined the job shared through %s (state %s)", rc.Machine, rc.Remote, git.Short(head))})
	marker := filepath.Join(top, root.ActiveMarker)
	if _, err := os.Stat(marker); os.IsNotExist(err) {
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			return "", failure.Wrap(failure.EnvSetup, err, "cannot create %s: %v", marker, err)
		}
	}
	record.Of(top).SetActive(true)
	excludeFromGit(top)
	fmt.Fprintf(e.Stdout, "harness: joined the job shared through %s as machine %s (%s)\n", rc.Remote, rc.Machine, top)
	return top, nil
}
