package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/state"
)

var claimVerb = &command{
	name:    "claim",
	args:    "[ID] [--json]",
	summary: "take the next eligible task (or ID) for this worker: in_progress, base commit and lease recorded",
	run:     runClaim,
}

// claimJSON is the stable machine-readable shape of `claim --json`.
type claimJSON struct {
	Claimed  *claimedJSON      `json:"claimed"`
	Why      string            `json:"why,omitempty"`
	Stop     bool              `json:"stop,omitempty"`
	Stats    string            `json:"stats,omitempty"`
	Commands map[string]string `json:"commands,omitempty"`
	Dirty    []string          `json:"uncommitted,omitempty"`
	// Reopenable: tasks failed [DEPENDENCY] a person may reopen now.
	Reopenable []string `json:"reopenable,omitempty"`
}

type claimedJSON struct {
	ID             string `json:"id"`
	Title          string `json:"title"`
	Attempt        int    `json:"attempt"`
	MaxAttempts    int    `json:"max_attempts"`
	Base           string `json:"started_at_commit"`
	ClaimedBy      string `json:"claimed_by"`
	LeaseExpiresAt string `json:"lease_expires_at"`
	Validation     string `json:"validation"`
	TimeoutSeconds int    `json:"timeout_seconds"`
	ProjectCheck   string `json:"integration_check,omitempty"` // run by validate too
	// What an imported plan (or harness add --accept) says of the task.
	Description string   `json:"description,omitempty"`
	Acceptance  []string `json:"acceptance,omitempty"`
	Source      string   `json:"source,omitempty"`
	LastError   string   `json:"last_error,omitempty"` // a retry: the last error_log entry, whole
}

func runClaim(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	asJSON := fs.Bool("json", false, "print JSON for machines")
	id, dir, err := e.optionalTarget(c, fs, args)
	if err != nil {
		return e.fail(err)
	}
	cl, err := e.worker(dir).Claim(id)
	if err != nil {
		return e.failCycle(err)
	}
	t := &cl.Task
	cmds := map[string]string{}
	if cl.Claimed() {
		arg := failure.ShellArg(t.ID)
		cmds = map[string]string{
			"checkpoint": fmt.Sprintf("harness checkpoint %s M/N \"what was done\"", arg),
			"validate":   "harness validate " + arg,
			"fail":       fmt.Sprintf("harness fail %s --category TASK_EXEC \"why\"", arg),
		}
	}
	if *asJSON {
		out := claimJSON{Why: cl.Why, Stop: cl.Stop, Dirty: cl.Dirty, Reopenable: cl.Reopenable}
		if cl.Stop {
			out.Why = fmt.Sprintf("max_tasks_per_session reached (%d tasks started this session)", cl.Count)
			out.Stats = cl.Stats.Line()
		}
		if cl.Claimed() {
			out.Commands = cmds
			out.Claimed = &claimedJSON{ID: t.ID, Title: t.Title, Attempt: t.Attempts + 1, MaxAttempts: t.MaxAttempts,
				Base: t.StartedAtCommit, ClaimedBy: t.ClaimedBy, LeaseExpiresAt: t.LeaseExpiresAt,
				Validation: t.Command, TimeoutSeconds: int(t.Timeout().Seconds()), ProjectCheck: cl.ProjectCheck,
				Description: t.Description, Acceptance: orEmpty(t.Acceptance), Source: t.Source}
			if n := len(t.ErrorLog); n > 0 {
				out.Claimed.LastError = t.ErrorLog[n-1]
			}
		}
		enc := json.NewEncoder(e.Stdout)
		enc.SetEscapeHTML(false)
		enc.Encode(out)
	}
	switch {
	case cl.Stop:
		if !*asJSON {
			fmt.Fprintf(e.Stdout, "STOP max_tasks_per_session reached: this session started %d tasks\n%s\n", cl.Count, cl.Stats.Line())
			fmt.Fprintln(e.Stdout, "hint: end this session; the next one continues with `harness claim` (without the Claude Code hooks, close this one with `harness session end` and open the next with `harness session start`)")
		}
		return ExitNegative
	case !cl.Claimed():
		if !*asJSON {
			fmt.Fprintf(e.Stdout, "none: %s\n", cl.Why)
			printReopenable(e, cl.Reopenable)
		}
		return ExitNegative
	case *asJSON:
		return ExitOK
	}
	w := e.Stdout
	fmt.Fprintf(w, "Claimed %s: %s\n", t.ID, t.Title)
	fmt.Fprintf(w, "  attempt %d/%d, base %s, claimed by %s, lease until %s\n", t.Attempts+1, t.MaxAttempts, git.Short(t.StartedAtCommit), t.ClaimedBy, t.LeaseExpiresAt)
	if n := len(t.ErrorLog); n > 0 {
		// A retry: what went wrong last time is the first thing to read.
		last := strings.SplitN(t.ErrorLog[n-1], "\n", 2)[0]
		if reasons, ok := strings.CutPrefix(last, "["+failure.Review+"] "); ok {
			// The reviewer's reasons are this attempt's to-do list.
			fmt.Fprintf(w, "  last error: [%s] the reviewer failed the last attempt (its validation passed):\n", failure.Review)
			for _, r := range strings.Split(reasons, "; ") {
				fmt.Fprintf(w, "    - %s\n", r)
			}
		} else {
			fmt.Fprintf(w, "  last error: %s\n", last)
		}
	}
	if t.Command != "" {
		fmt.Fprintf(w, "  validation: %s (timeout %ds)\n", t.Command, int(t.Timeout().Seconds()))
	}
	if cl.ProjectCheck != "" {
		// Early, certain advice: validate runs it after the task's own
		// check, and a completion needs both.
		fmt.Fprintf(w, "  and the project's check: %s (session_config.integration_check: validate runs it too, and the task completes only when both pass)\n", cl.ProjectCheck)
	}
	printPlanned(w, t)
	fmt.Fprintln(w, "next:")
	fmt.Fprintf(w, "  %-52s after each significant step\n", cmds["checkpoint"])
	fmt.Fprintf(w, "  %-52s runs the validation: the only way to complete it\n", cmds["validate"])
	fmt.Fprintf(w, "  %-52s if it cannot be done\n", cmds["fail"])
	if t.Command == "" {
		fmt.Fprintf(e.Stderr, "WARN [%s] %s has no validation.command: it cannot be completed until a human sets one\n", failure.Config, t.ID)
	}
	if n := len(cl.Dirty); n > 0 {
		fmt.Fprintf(e.Stderr, "WARN %d uncommitted change(s) in the work tree are now part of this attempt (a failed validation rolls them back; its snapshot keeps them)\n", n)
	}
	return ExitOK
}

// printPlanned shows what a plan says of task t beyond its title: its
// description and its acceptance criteria, which the work must meet and
// the validation should show (a person may check them too).
func printPlanned(w io.Writer, t *state.Task) {
	if t.Source != "" {
		fmt.Fprintf(w, "  from: %s\n", t.Source)
	}
	if d := strings.TrimSpace(t.Description); d != "" {
		fmt.Fprintln(w, "  description:")
		for _, l := range strings.Split(d, "\n") {
			fmt.Fprintln(w, strings.TrimRight("    "+l, " "))
		}
	}
	if len(t.Acceptance) > 0 {
		fmt.Fprintln(w, "  acceptance criteria:")
		for _, a := range t.Acceptance {
			fmt.Fprintf(w, "    - %s\n", a)
		}
	}
}
