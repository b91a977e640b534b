package guard

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/shellscan"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

const (
	ruleBash     = "bash-state-files"
	ruleActive   = "premature-completion"
	ruleCommands = "allowed-commands"
	ruleGit      = "shared-worktree-git"
	ruleInit     = "init-script"
)

// mutatingVerb reports whether a harness verb changes the state. These
// sets are switches, not maps: a map literal is built at every hook's
// start (docs/perf.md), a switch costs nothing until it is asked.
func mutatingVerb(name string) bool {
	switch name {
	case "init", "add", "next", "claim", "checkpoint", "validate", "fail", "recover", "renew",
		"stats", "integrate":
		return true
	}
	return false
}

// personVerb reports whether a harness verb is one only a person runs (each refuses an
// agent itself; the guard says so before the command runs, however it is
// wrapped in the command line).
func personVerb(name string) bool {
	switch name {
	case "pause", "resume", "cancel", "remove", "retry", "workers", "undo":
		return true
	}
	return false
}

// hookProgram reports whether a name is one of the harness's hook
// executables: trusted because Claude
// Code alone runs them (record.Trust), so the agent's tools may not.
func hookProgram(name string) bool {
	switch name {
	case "harness-session-start", "harness-pre-tool-use", "harness-post-tool-use",
		"harness-post-tool-use-failure", "harness-stop", "harness-subagent-stop",
		"harness-teammate-idle", "harness-session-end", "harness-user-prompt-submit",
		"harness-pre-compact", "harness-stop-failure":
		return true
	}
	return false
}

// harnessMarkers are substrings whose presence makes an unparsable command
// suspicious.
var harnessMarkers = []string{state.FileName, root.ProgressFile, ".harness-"}

// bash decides a Bash command.
func (c *call) bash(cmd string) hook.Decision {
	if strings.TrimSpace(cmd) == "" {
		return hook.Decision{}
	}
	rep := shellscan.Analyze(cmd, c.cwd)
	c.rep = &rep
	if rep.ParseError != nil && mentionsHarness(rep, cmd) {
		return deny(ruleBash, fmt.Sprintf("the command does not parse (%v) and it mentions harness files, so it cannot be checked.", rep.ParseError),
			"write it as plain shell, or use the harness command for state changes.")
	}
	if d, denied := c.bashStateWrites(rep); denied {
		return d
	}
	if d, denied := c.wiringBash(rep); denied {
		return d
	}
	for _, p := range rep.Programs {
		if p.Base() == "harness" && len(p.Args) > 0 && p.Args[0] == "adopt" {
			return deny(ruleState, "`harness adopt` makes a hand-edited tasks file the state the harness builds on: it is the user's decision, never an agent's.",
				"change the state with the harness verbs (`harness help`); if the user edited the file, tell them to run `harness adopt` in their terminal.")
		}
		if p.Base() == "harness" && len(p.Args) > 0 && personVerb(p.Args[0]) {
			return deny(ruleState, fmt.Sprintf("`harness %s` is the user's decision, never an agent's (it is refused inside a session however it is run).", p.Args[0]),
				fmt.Sprintf("if you are stuck, say so and stop; the user runs `harness %s` in their terminal.", p.Args[0]))
		}
		if hookProgram(p.Base()) {
			return deny(ruleState, fmt.Sprintf("`%s` is one of the harness's hooks: Claude Code runs it on its events, and its judgement is not the agent's to call.", p.Base()),
				"use the harness verbs (`harness help`); the hooks run by themselves.")
		}
		if p.Base() == "harness" && len(p.Args) > 0 && mutatingVerb(p.Args[0]) {
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
	return c.scopeWrites(rep.Writes)
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
	linking := false
	for _, w := range rep.Writes {
		linking = linking || w.Kind == shellscan.Link
	}
	for _, w := range rep.Writes {
		name, exact := c.bashHit(w)
		if name == "" && linking && w.Raw != "" && isWatched(filepath.Base(w.Path)) {
			// a/link/../x where the command itself makes the link: where
			// ".." leads is not known until it runs.
			name = filepath.Base(w.Path)
		}
		if name == "" {
			continue
		}
		if d, denied := c.bashHarnessWrite(w, name, exact); denied {
			return d, true
		}
	}
	return hook.Decision{}, false
}

// lockName is how the session lock directory is named in reasons.
const lockName = "the session lock"

// bashHit names the harness file w may affect ("" for none), and whether
// its target is known exactly (not an expansion or glob that may match).
func (c *call) bashHit(w shellscan.Write) (name string, exact bool) {
	if !w.Dynamic {
		for _, p := range c.physical(w) {
			if n := c.harnessName(p); n != "" {
				return n, true
			}
			if c.isLock(p) {
				return lockName, true
			}
			if w.Kind == shellscan.LinkSource && c.ancestorOfRoot(p) {
				return ".", true
			}
			if n := c.sameFile(p); n != "" {
				return n, true
			}
		}
	}
	// What the check after the call cannot put back comes first: a write
	// that may reach both the lock and the tasks file is judged for the lock.
	// A target known by nothing at all (names read by xargs, a command's
	// output) is no sign of the lock: every honest xargs would be denied.
	if lk := lock.SessionPath(c.Root); (w.Touches(lk) || w.Touches(lk+"/pid")) && w.Reach == shellscan.ReachAll && (!w.Dynamic || w.Under() != "") {
		return lockName, false
	}
	if w.Kind == shellscan.LinkSource && w.Touches(c.Root) {
		return ".", false
	}
	if touchesRuntime(w, c.Root) && c.gitReaches(w, statecache.RuntimeDir) {
		return statecache.RuntimeDir, false
	}
	for _, n := range bashWatched {
		if w.Touches(filepath.Join(c.Root, n)) && c.gitReaches(w, n) {
			return n, false
		}
	}
	return "", false
}

// touchesRuntime reports whether w may remove or rewrite the runtime
// directory or a file the harness keeps in it. A new file of another name
// there is harmless, so "> $D/out.txt" is not suspect: only a write that
// reaches the directory, leaves the name open, or names a runtime file.
func touchesRuntime(w shellscan.Write, dir string) bool {
	rt := filepath.Join(dir, statecache.RuntimeDir)
	removal := w.Kind == shellscan.Remove || w.Kind == shellscan.MoveSource
	if !w.Dynamic && (w.Path == rt || strings.HasPrefix(w.Path, rt+"/") || removal && (w.Touches(rt) || w.Touches(rt+"/\x7f"))) {
		return true // the directory itself, a file in it, or a removal that reaches it
	}
	base := filepath.Base(w.Path)
	if base == "summary.json" || strings.HasPrefix(base, "calls-") || strings.HasPrefix(base, "heartbeat-") || strings.HasPrefix(base, "session-") {
		return w.Touches(rt + "/" + base)
	}
	return false
}

func isWatched(name string) bool {
	for _, n := range bashWatched {
		if n == name {
			return true
		}
	}
	return false
}

// bashWatched are the harness files a dynamic write is checked against.
var bashWatched = []string{state.FileName, state.FileName + ".bak", state.FileName + ".tmp", root.ProgressFile, root.ActiveMarker, root.InitScript}

// physical returns the paths the kernel may reach for w: the lexically
// cleaned path with symlinks resolved, and, when the command wrote "..",
// the same path resolved component by component (a symlink before a ".."
// is followed first).
func (c *call) physical(w shellscan.Write) []string {
	out := []string{resolve(w.Path)}
	if w.Raw != "" {
		if p := resolvePhysical(w.Raw); p != out[0] {
			out = append(out, p)
		}
	}
	return out
}

func (c *call) isLock(p string) bool {
	lk := lock.SessionPath(c.Root)
	return p == lk || strings.HasPrefix(p, lk+"/")
}

// ancestorOfRoot reports whether p is the state root or a directory above
// it: a link to it is a second way into the harness files.
func (c *call) ancestorOfRoot(p string) bool {
	return p == c.Root || p == "/" || strings.HasPrefix(c.Root, p+"/")
}

// bashHarnessWrite decides one Bash write to the harness file name.
func (c *call) bashHarnessWrite(w shellscan.Write, name string, exact bool) (hook.Decision, bool) {
	if d, denied := c.lockCheck(w.Op); denied {
		return d, true
	}
	verb := "write"
	if w.Kind == shellscan.Remove {
		verb = "delete"
	}
	what := fmt.Sprintf("`%s` %ss %s", w.Op, verb, name)
	if (!exact || w.Kind == shellscan.ScriptRewrite) && repairedAfter(name) {
		// Not sure (an expansion, a glob, a file name found in
		// interpreter code that may only read it): let it run. The check
		// after the call knows what it really wrote and puts back what the
		// harness did not write (internal/integrity); denying everything
		// that might match would stop honest work all day.
		return hook.Decision{}, false
	}
	if !exact {
		how := "its target is not known statically: " + w.Path
		if !w.Dynamic {
			how = "it reaches what lies under " + w.Path // a directory named, as git clean or rm -r names one
		}
		what = fmt.Sprintf("`%s` may %s %s (%s)", w.Op, verb, name, how)
	}
	switch {
	case w.Kind == shellscan.LinkSource:
		if name == "." {
			name = "the state root"
		}
		return deny(ruleBash, fmt.Sprintf("`%s` would make a link to %s: a second name through which harness files could be rewritten unseen.", w.Op, name),
			"read harness files in place (`harness status`, `cat harness-tasks.json`); copy them with plain `cp` if you need a scratch copy."), true
	case name == lockName:
		return deny(ruleLock, fmt.Sprintf("`%s` would change %s (%s), which only the harness takes and releases.", w.Op, lockName, lock.SessionPath(c.Root)),
			"leave it alone: SessionStart takes it, SessionEnd releases it, and a dead owner's lock is reclaimed at the next session start."), true
	case name == state.FileName || name == state.FileName+".bak" || name == state.FileName+".tmp":
		return deny(ruleBash, what+"; only the harness command changes the state (harness-tasks.json, its .bak and .tmp).",
			"`harness claim`, `harness checkpoint ID M/N \"…\"`, `harness validate ID`, `harness fail ID --category C \"…\"`, `harness add \"…\"`."), true
	case name == root.ProgressFile:
		if w.Kind == shellscan.Append {
			return hook.Decision{}, false
		}
		return deny(ruleBash, what+", which is append-only: only `>>` may add to it.",
			"append with `>>` only (the harness command logs its own steps)."), true
	case name == root.ActiveMarker:
		switch w.Kind {
		case shellscan.Touch, shellscan.Redirect, shellscan.Append, shellscan.Tee, shellscan.Output, shellscan.Chmod, shellscan.Truncate:
			return hook.Decision{}, false // (re)creating the marker
		}
		return c.deactivation(w)
	case name == root.InitScript:
		if w.Kind == shellscan.Remove || w.Kind == shellscan.MoveSource || w.Reach != shellscan.ReachAll {
			return hook.Decision{}, false // removing it, or git setting it aside, adds no commands
		}
		return deny(ruleInit, what+"; SessionStart runs it at every session start, outside this guard, so it is the user's to change.",
			"ask the user to change harness-init.sh; put one-off set-up commands in your own Bash calls."), true
	}
	instead := "leave it alone."
	if w.Kind == shellscan.Remove && w.Reach == shellscan.ReachAll && strings.HasPrefix(w.Op, "git clean") {
		instead = "`git clean` without -x or -X: it keeps the files git ignores, the harness's among them (.git/info/exclude lists them)."
	}
	return deny(ruleBash, what+", which is the harness's own bookkeeping.", instead), true
}

// repairedAfter reports whether a change to the harness file name costs
// nothing lasting when the guard lets an unsure write run: the check after
// every tool call puts back the state, the marker, the log and
// harness-init.sh; the backup and the temporary file are rewritten by the
// next save, which never reads them; the runtime directory holds a cache
// that is rebuilt and counters that start afresh, but a forged summary
// could mislead Stop, so writes that name its files stay denied (see
// touchesRuntime). Then the guard denies only writes it is sure of.
func repairedAfter(name string) bool {
	switch name {
	case state.FileName, state.FileName + ".bak", state.FileName + ".tmp", root.ProgressFile, root.ActiveMarker, root.InitScript:
		return true
	}
	return false
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

// shellBuiltin reports whether a builtin may always run: it cannot start
// other programs.
func shellBuiltin(name string) bool {
	switch name {
	case "cd", "pwd", "echo", "printf", "true", "false", "test", "[", "export", "set", "unset",
		"read", "exit", "return", "shift", "local", "declare", ":", "harness":
		return true
	}
	return false
}

// isProgram reports whether p, which runs base, is the program the name base
// stands for. A bare name is (the shell looks it up on PATH, or runs its
// builtin). A path is only when it is the same file as the one PATH finds
// for base, or, for harness, the harness installed beside this hook: a
// ./echo, bin/harness or ./ls of the agent's own is another program. A
// relative path in a directory not known statically is not.
func isProgram(p shellscan.Program, base string) bool {
	if !strings.Contains(p.Name, "/") {
		return true
	}
	var want []os.FileInfo
	if found, err := exec.LookPath(base); err == nil {
		if fi, err := os.Stat(found); err == nil {
			want = append(want, fi)
		}
	}
	if base == "harness" {
		if self, err := os.Executable(); err == nil {
			if fi, err := os.Stat(filepath.Join(filepath.Dir(self), "harness")); err == nil {
				want = append(want, fi)
			}
		}
	}
	dirs := p.Dirs
	if filepath.IsAbs(p.Name) || len(dirs) == 0 {
		dirs = []string{"/"}
	}
	for _, d := range dirs {
		if d == "" {
			return false
		}
		name := p.Name
		if !filepath.IsAbs(name) {
			name = filepath.Join(d, name)
		}
		fi, err := os.Stat(name)
		if err != nil || !slices.ContainsFunc(want, func(w os.FileInfo) bool { return os.SameFile(fi, w) }) {
			return false
		}
	}
	return true
}

// commandPolicy enforces session_config.allowed_commands when it is set.
func (c *call) commandPolicy(rep shellscan.Report) (hook.Decision, bool) {
	sum, err := c.summary()
	if err != nil || sum.Config.AllowedCommands == nil {
		return hook.Decision{}, false
	}
	allowed := strings.Join(sum.Config.AllowedCommands, ", ")
	if rep.ParseError != nil || rep.Incomplete {
		return deny(ruleCommands, "the command cannot be fully parsed, so its programs cannot be checked against session_config.allowed_commands.",
			"use plain commands from the allowed list: "+allowed+"."), true
	}
	ok := map[string]bool{}
	for _, a := range sum.Config.AllowedCommands {
		ok[a] = true
	}
	for _, p := range rep.Programs {
		if p.Dynamic {
			return deny(ruleCommands, fmt.Sprintf("the program `%s` comes from an expansion, so it cannot be checked against session_config.allowed_commands.", p.Name),
				"name the program literally; allowed: "+allowed+"."), true
		}
		b := p.Base()
		if ok[p.Name] || (ok[b] || shellBuiltin(b)) && isProgram(p, b) {
			continue
		}
		what := b
		if ok[b] || shellBuiltin(b) {
			what = p.Name // a file named like an allowed program is not it
		}
		return deny(ruleCommands, fmt.Sprintf("`%s` is not in session_config.allowed_commands.", what),
			"use only: "+allowed+" (ask the user to extend the list if the task needs more)."), true
	}
	return hook.Decision{}, false
}

// gitReaches reports whether a git write can affect the harness file name:
// a checkout or reset rewrites only files git tracks, git clean and git
// stash -u also untracked files that are not ignored (harness init lists
// the harness files in .git/info/exclude). git is asked once per call, and
// only for such commands.
func (c *call) gitReaches(w shellscan.Write, name string) bool {
	switch w.Reach {
	case shellscan.ReachTracked:
		if c.tracked == nil {
			c.tracked = c.gitList("--cached")
		}
		return c.tracked[name]
	case shellscan.ReachUnignored:
		if c.unignored == nil {
			c.unignored = c.gitList("--cached", "--others", "--exclude-standard")
		}
		return c.unignored[name]
	}
	return true
}

// gitListTimeout bounds gitList well inside the hook's own timeout: a hook
// killed by Claude Code fails open, a git that does not answer in time
// fails closed.
const gitListTimeout = 5 * time.Second

// gitList lists which harness files `git ls-files` reports with flags. When
// git cannot answer (in time), every file counts (fail closed).
func (c *call) gitList(flags ...string) map[string]bool {
	args := append([]string{"ls-files", "-z"}, flags...)
	args = append(append(append(args, "--"), bashWatched...), statecache.RuntimeDir)
	out, err := git.Cmd{Dir: c.Root, Env: []string{"GIT_OPTIONAL_LOCKS=0"}, Timeout: gitListTimeout}.Run(args...)
	m := map[string]bool{}
	if err != nil {
		if strings.Contains(err.Error(), "not a git repository") {
			return m // nothing is tracked outside a repository
		}
		for _, n := range bashWatched {
			m[n] = true
		}
		m[statecache.RuntimeDir] = true
		return m
	}
	for _, f := range strings.Split(out, "\x00") {
		if dir, _, nested := strings.Cut(f, "/"); nested {
			f = dir
		}
		if f != "" {
			m[f] = true
		}
	}
	return m
}
