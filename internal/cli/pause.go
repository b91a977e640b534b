package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/apierror"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

var pauseVerb = &command{
	name:    "pause",
	args:    "",
	summary: "pause the run: every session may stop at its next turn end and starts no work, the agent's verbs are refused, claims are kept (a person's decision: refused inside a Claude Code session)",
	run:     runPause,
}

var resumeVerb = &command{
	name:    "resume",
	args:    "[--wait] [-- CLAUDE-ARGS...]",
	summary: "end a pause and print the command that continues the job; with --wait, wait until a rate limit that ended the last turn resets, then run it (a person's decision: refused inside a Claude Code session)",
	run:     runResume,
}

var cancelVerb = &command{
	name:    "cancel",
	args:    "",
	summary: "cancel the run for good: claims released, the hooks switched off, the agent's verbs refused, STATS logged; only a person's `harness init` turns it back on (a person's decision: refused inside a Claude Code session)",
	run:     runCancel,
}

// simpleVerb parses a verb that takes no arguments and finds the state root.
func (e *Env) simpleVerb(c *command, args []string) (string, error) {
	if err := e.parseNone(c, e.flags(c), args); err != nil {
		return "", err
	}
	if err := e.personOnly(c.name); err != nil {
		return "", err
	}
	return e.stateRoot()
}

func runPause(e *Env, c *command, args []string) int {
	dir, err := e.simpleVerb(c, args)
	if err != nil {
		return e.fail(err)
	}
	path := filepath.Join(dir, root.PausedFile)
	if root.Paused(dir) {
		fmt.Fprintf(e.Stdout, "harness: already paused (since %s); `harness resume` continues\n", pausedSince(path))
		return ExitOK
	}
	at := e.Now().UTC().Format("2006-01-02T15:04:05Z")
	// The record first: the hooks decide on it, and a pause file it does
	// not hold is put back as a forgery. Both under the transaction lock,
	// as a person's resume and cancel write: the check after a tool call
	// looks again under that lock before it repairs, so it never finds one
	// written and the other not yet (it removed a pause file as forged, or
	// put one back, and told the agent of a tamper that was not).
	var werr error
	lock.InTx(dir, func() {
		rec := record.Of(dir)
		rec.SetPaused(at)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if werr = os.WriteFile(path, []byte(at+"\n"), 0o644); werr != nil {
			rec.SetPaused("")
		}
	})
	if werr != nil {
		return e.fail(failure.Wrap(failure.EnvSetup, werr, "cannot write %s: %v", path, werr))
	}
	progress.Append(dir, progress.Entry{Time: e.Now(), Session: progress.LastSession(dir), Type: progress.Init, Message: "Run paused by the user"})
	fmt.Fprintln(e.Stdout, "harness: paused. A running session may stop at its next turn end (its claim is kept); new sessions start no work. `harness resume` continues.")
	return ExitOK
}

func pausedSince(path string) string {
	data, _ := safefile.ReadFile(path, safefile.Small)
	if s := strings.TrimSpace(string(data)); s != "" {
		return s
	}
	return "an unknown time"
}

func runResume(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	wait := fs.Bool("wait", false, "wait until the recorded rate limit resets, then run the command that continues the job (`claude --continue -p \"/harness run\"`) and exit with its status")
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) > 0 && !*wait {
		return e.fail(usageErr(c, "unexpected argument %q (arguments for claude follow --wait --)", pos[0]))
	}
	if err := e.personOnly("resume"); err != nil {
		return e.fail(err)
	}
	// Logged only when there was a pause to end: a resume of a run not
	// paused decides nothing.
	verb := e.person
	e.person = ""
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	rec := record.Of(dir)
	if m, _ := rec.Mark(); root.Paused(dir) || m.Paused != "" {
		e.person = verb
		e.logPerson(dir)
		var rerr error
		lock.InTx(dir, func() {
			rec.SetPaused("")
			if err := os.Remove(filepath.Join(dir, root.PausedFile)); err != nil && !os.IsNotExist(err) {
				rerr = err
			}
		})
		if rerr != nil {
			return e.fail(failure.Wrap(failure.EnvSetup, rerr, "cannot end the pause: %v", rerr))
		}
		progress.Append(dir, progress.Entry{Time: e.Now(), Session: progress.LastSession(dir), Type: progress.Init, Message: "Run resumed by the user"})
		fmt.Fprintln(e.Stdout, "harness: resumed.")
	} else {
		fmt.Fprintln(e.Stdout, "harness: not paused.")
	}
	if !root.Active(dir) {
		fmt.Fprintln(e.Stdout, "The hooks are off (no .harness-active): `harness init` switches them on again.")
		if *wait {
			return ExitNegative
		}
		return ExitOK
	}
	var until time.Time
	if r := apierror.Read(dir); r != nil {
		fmt.Fprintf(e.Stdout, "the last turn ended on an API error (%s) at %s", r.Kind, r.Time)
		if t, err := time.Parse(time.RFC3339, r.ResetAt); err == nil {
			until = t
			fmt.Fprintf(e.Stdout, "; the limit resets at %s", r.ResetAt)
		}
		fmt.Fprintln(e.Stdout)
	}
	if !*wait {
		fmt.Fprintf(e.Stdout, "continue the job with:\n  cd %[1]s && claude --continue \"/harness run\"\n(or start a fresh session: claude \"/harness run\"; unattended, from cron or a timer: cd %[1]s && claude --continue -p \"/harness run\", or harness resume --wait)\n", failure.ShellArg(dir))
		return ExitOK
	}
	return e.continueJob(dir, until, pos)
}

// continueJob waits until until (when it is ahead), then runs the command
// that continues the job in dir, with extra (a person's arguments for
// claude, such as --permission-mode) before -p, with this process's
// standard streams, and returns its exit status.
func (e *Env) continueJob(dir string, until time.Time, extra []string) int {
	claude, err := exec.LookPath(claudeProgram())
	if err != nil {
		return e.fail(failure.New(failure.EnvSetup, "cannot continue the job: %s is not on PATH", claudeProgram()).
			WithHint("install Claude Code, or set HARNESS_CLAUDE to its path"))
	}
	if d := until.Sub(e.Now()); d > 0 {
		fmt.Fprintf(e.Stdout, "waiting until %s (%s) for the limit to reset\n", until.UTC().Format(time.RFC3339), d.Round(time.Second))
		time.Sleep(d)
	}
	apierror.Clear(dir)
	progress.Append(dir, progress.Entry{Time: e.Now(), Session: progress.LastSession(dir), Type: progress.Init, Message: "Run continued by harness resume --wait"})
	args := append(append([]string{"--continue"}, extra...), "-p", "/harness run")
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = failure.ShellArg(a)
	}
	fmt.Fprintf(e.Stdout, "running: cd %s && claude %s\n", failure.ShellArg(dir), strings.Join(shown, " "))
	cmd := exec.Command(claude, args...)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, e.Stdout, e.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot run %s: %v", claude, err))
	}
	return ExitOK
}

// claudeProgram is the Claude Code executable: $HARNESS_CLAUDE, else
// `claude` from PATH.
func claudeProgram() string {
	if p := os.Getenv("HARNESS_CLAUDE"); p != "" {
		return p
	}
	return "claude"
}

func runCancel(e *Env, c *command, args []string) int {
	dir, err := e.simpleVerb(c, args)
	if err != nil {
		return e.fail(err)
	}
	var released []string
	var st schedule.Stats
	s, err := statecache.Update(dir, func(s *state.State) error {
		for i := range s.Tasks {
			t := &s.Tasks[i]
			if t.Status == state.InProgress {
				t.Status = state.Pending
				t.ClearClaim()
				released = append(released, t.ID)
			}
		}
		st = schedule.Count(s.Tasks)
		return nil
	})
	if err != nil {
		return e.fail(err)
	}
	// Off first in the record, then the marker: no check after a tool call
	// may put the marker back.
	lock.InTx(dir, func() {
		rec := record.Of(dir)
		rec.SetActive(false)
		rec.SetCancelled(stamp(e.Now()))
		os.Remove(filepath.Join(dir, root.ActiveMarker))
		rec.SetPaused("")
		os.Remove(filepath.Join(dir, root.PausedFile))
	})
	os.RemoveAll(lock.SessionPath(dir))
	msg := "Run cancelled by the user"
	if len(released) > 0 {
		msg += " (released " + strings.Join(released, ", ") + ")"
	}
	n := s.SessionCount
	progress.Append(dir,
		progress.Entry{Time: e.Now(), Session: n, Type: progress.Init, Message: msg},
		progress.Entry{Time: e.Now(), Session: n, Type: progress.Stats, Message: st.Line()})
	fmt.Fprintf(e.Stdout, "harness: cancelled. %s\nThe hooks are off; the tasks and the log are kept (`harness init` switches the hooks on again).\n", msg)
	return ExitOK
}
