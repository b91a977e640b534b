package guard

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/shellscan"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/summary"
)

const (
	ruleBash     = "bash-state-files"
	ruleActive   = "premature-completion"
	ruleCommands = "allowed-commands"
	ruleGit      = "shared-worktree-git"
)

// mutatingVerbs are the harness verbs that change the state.
var mutatingVerbs = map[string]bool{
	"init": true, "add": true, "next": true, "claim": true, "checkpoint": true, "validate": true,
	"fail": true, "recover": true, "renew": true, "stats": true,
}

// harnessMarkers are substrings whose presence makes an unparsable command
// suspicious.
var harnessMarkers = []string{state.FileName, "harness-progress.txt", ".harness-"}

// bash decides a Bash command.
func (c *call) bash(cmd string) hook.Decision {
	if strings.TrimSpace(cmd) == "" {
		return hook.Decision{}
	}
	rep := shellscan.Analyze(cmd, c.cwd)
	if rep.ParseError != nil && mentionsHarness(rep, cmd) {
		return deny(ruleBash, fmt.Sprintf("the command does not parse (%v) and it mentions harness files, so it cannot be checked.", rep.ParseError),
			"write it as plain shell, or use the harness command for state changes.")
	}
	if d, denied := c.bashStateWrites(rep); denied {
		return d
	}
	for _, p := range rep.Programs {
		if p.Base() == "harness" && len(p.Args) > 0 && mutatingVerbs[p.Args[0]] {
			if d, denied := c.lockCheck("harness " + p.Args[0]); denied {
				return d
			}
		}
	}
	if d, denied := c.commandPolicy(rep); denied {
		return d
	}
	if d, denied := c.sharedGit(rep); denied {
		return d
	}
	var targets []string
	var ops []string
	for _, w := range rep.Writes {
		if !w.Dynamic && w.Kind != shellscan.GitRestore {
			targets = append(targets, w.Path)
			ops = append(ops, w.Op)
		}
	}
	if len(targets) > 0 {
		return c.scopeCheckOps(targets, ops)
	}
	return hook.Decision{}
}

func mentionsHarness(rep shellscan.Report, cmd string) bool {
	for _, m := range harnessMarkers {
		if strings.Contains(cmd, m) {
			return true
		}
		for _, w := range rep.Mentions {
			if strings.Contains(w, m) {
				return true
			}
		}
	}
	return false
}

// bashStateWrites denies writes to the harness files that only the harness
// command may make.
func (c *call) bashStateWrites(rep shellscan.Report) (hook.Decision, bool) {
	tasks := filepath.Join(c.dir, state.FileName)
	progressLog := filepath.Join(c.dir, "harness-progress.txt")
	active := filepath.Join(c.dir, root.ActiveMarker)
	runtime := filepath.Join(c.dir, summary.RuntimeDir)
	for _, w := range rep.Writes {
		if w.Kind == shellscan.GitRestore {
			continue // the state files are kept out of git by harness init
		}
		hits := func(target string) bool {
			return w.Touches(target) || !w.Dynamic && resolve(w.Path) == target
		}
		switch {
		case hits(tasks) || hits(tasks+".bak") || hits(tasks+".tmp"):
			if d, denied := c.lockCheck(w.Op); denied {
				return d, true
			}
			return deny(ruleBash, fmt.Sprintf("`%s` writes harness-tasks.json (or its backup); only the harness command changes the state.", w.Op),
				"`harness claim`, `harness checkpoint ID M/N \"…\"`, `harness validate ID`, `harness fail ID --category C \"…\"`, `harness add \"…\"`."), true
		case hits(progressLog) && w.Kind != shellscan.Append:
			return deny(ruleBash, fmt.Sprintf("`%s` would rewrite harness-progress.txt, which is append-only.", w.Op),
				"append with `>>` only (the harness command logs its own steps)."), true
		case hits(active) && (w.Kind == shellscan.Remove || w.Kind == shellscan.MoveSource):
			if d, denied := c.deactivation(w); denied {
				return d, true
			}
		case w.Touches(runtime) || w.Touches(runtime+"/x") || strings.HasPrefix(w.Path, runtime+"/"):
			return deny(ruleBash, fmt.Sprintf("`%s` writes %s/, the hooks' own bookkeeping.", w.Op, summary.RuntimeDir),
				"leave it alone."), true
		}
	}
	return hook.Decision{}, false
}

// deactivation refuses to switch the harness off while work remains.
func (c *call) deactivation(w shellscan.Write) (hook.Decision, bool) {
	sum, err := c.summary()
	if err != nil {
		return deny(ruleActive, fmt.Sprintf("`%s` would switch the harness off, and the state cannot be read to check that the work is done (%v).", w.Op, err),
			"run `harness status`."), true
	}
	remaining := sum.Eligible + len(sum.InProgress)
	if remaining == 0 {
		return hook.Decision{}, false
	}
	next := ""
	if sum.Next != nil {
		next = fmt.Sprintf(" next=%s: %s.", sum.Next.ID, sum.Next.Title)
	}
	return deny(ruleActive, fmt.Sprintf("`%s` would switch the harness off while work remains (%s).%s", w.Op, sum.Stats.Counts(), next),
		"keep going: `harness claim`, do the work, `harness validate ID`. The Stop hook removes .harness-active itself when everything is done."), true
}

// shellBuiltins may always run: they cannot start other programs.
var shellBuiltins = map[string]bool{
	"cd": true, "pwd": true, "echo": true, "printf": true, "true": true, "false": true, "test": true, "[": true,
	"export": true, "set": true, "unset": true, "read": true, "exit": true, "return": true, "shift": true,
	"local": true, "declare": true, ":": true, "harness": true,
}

// commandPolicy enforces session_config.allowed_commands when it is set.
func (c *call) commandPolicy(rep shellscan.Report) (hook.Decision, bool) {
	sum, err := c.summary()
	if err != nil || sum.AllowedCommands == nil {
		return hook.Decision{}, false
	}
	allowed := strings.Join(sum.AllowedCommands, ", ")
	if rep.ParseError != nil || rep.Incomplete {
		return deny(ruleCommands, "the command cannot be fully parsed, so its programs cannot be checked against session_config.allowed_commands.",
			"use plain commands from the allowed list: "+allowed+"."), true
	}
	ok := map[string]bool{}
	for _, a := range sum.AllowedCommands {
		ok[a] = true
	}
	for _, p := range rep.Programs {
		if p.Dynamic {
			return deny(ruleCommands, fmt.Sprintf("the program `%s` comes from an expansion, so it cannot be checked against session_config.allowed_commands.", p.Name),
				"name the program literally; allowed: "+allowed+"."), true
		}
		if b := p.Base(); !ok[b] && !ok[p.Name] && !shellBuiltins[b] {
			return deny(ruleCommands, fmt.Sprintf("`%s` is not in session_config.allowed_commands.", b),
				"use only: "+allowed+" (ask the user to extend the list if the task needs more)."), true
		}
	}
	return hook.Decision{}, false
}
