package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/state"
)

var initVerb = &command{
	name:    "init",
	args:    "[DIR] [--no-exclude] [--no-git] [--nested]",
	summary: "create the state files in DIR (default: current directory) and activate the hooks",
	run:     runInit,
}

// initScript is the harness-init.sh template: commented, so it does nothing
// until the user fills it in, and idempotent by construction.
const initScript = `#!/usr/bin/env bash
# harness-init.sh: runs at every session start (bounded time). Keep it
# idempotent: it must be safe to run again and again. A non-zero exit is
# reported to the agent as an ENV_SETUP failure.
set -euo pipefail

# Install dependencies, for example:
# npm ci --silent
# pip install -r requirements.txt

# Start or check services, for example:
# curl -sf http://localhost:5432 >/dev/null || echo "WARN: DB not reachable"

# A fast smoke test, for example:
# go build ./...

echo "Environment health check complete"
`

// harnessFiles are kept out of git (the harness manages them itself and a
// rollback must never revert them).
var harnessFiles = []string{state.FileName, state.BackupName, state.FileName + ".corrupt-*", progress.FileName, ".harness-*"}

func runInit(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	noExclude := fs.Bool("no-exclude", false, "do not add the harness files to .git/info/exclude")
	noGit := fs.Bool("no-git", false, "do not run git init when DIR is not in a git repository")
	nested := fs.Bool("nested", false, "start a separate job in DIR although a parent directory holds one")
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) > 1 {
		return e.fail(usageErr(c, "too many arguments"))
	}
	dir := e.Cwd
	if len(pos) == 1 {
		dir = pos[0]
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(e.Cwd, dir)
		}
	}
	if _, err := os.Stat(state.Path(dir)); os.IsNotExist(err) && !*nested {
		// Every command run under dir would find the new job first and
		// leave the parent's unseen.
		if parent := root.Enclosing(dir); parent != "" {
			return e.fail(failure.New(failure.Usage, "%s holds a harness job already: a job in %s would be nested in it, and every harness command run there would work on the new job, not on that one", parent, dir).
				WithHint("work on the job in %s (`harness status` there shows it), or start a separate job here with `harness init --nested`", failure.ShellArg(parent)))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot create %s: %v", dir, err))
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if _, err := os.Stat(state.Path(dir)); err == nil {
		// Switching the hooks on again is what ends a cancel: the
		// person's, not the agent's (heldBack).
		if err := e.heldBack(dir); err != nil {
			return e.fail(err)
		}
	}
	now := e.Now()
	var did []string
	// The harness keeps its checkpoints in git, and its own files must be
	// kept out of git before the first commit can take them in: a project
	// without a repository gets one now, with the files excluded below,
	// so the baseline the user commits next is clean.
	if _, err := git.Top(dir); err != nil && !*noGit && git.Available() {
		if _, err := git.Run(dir, "init", "-q"); err != nil {
			return e.fail(failure.Wrap(failure.EnvSetup, err, "git init in %s failed: %v", dir, err).
				WithHint("fix the cause, or run `harness init --no-git` and set up git yourself"))
		}
		did = append(did, "ran git init (the harness keeps its checkpoints in git; commit a baseline next: "+git.BaselineAdvice(dir)+")")
	}
	created := false
	if err := state.Create(dir, now); err == nil {
		created = true
		did = append(did, "created "+state.FileName)
		// A new job: what an earlier job in this directory spent is not
		// this one's.
		budget.Reset(record.Of(dir))
	} else if !os.IsExist(err) {
		return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot create %s: %v", state.Path(dir), err))
	}
	s, err := state.Load(dir)
	if err != nil {
		return e.fail(err)
	}
	if created {
		if err := progress.Append(dir, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Init,
			Message: "Harness initialized for project " + dir}); err != nil {
			return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot write %s: %v", progress.Path(dir), err))
		}
		did = append(did, "created "+progress.FileName)
	} else if _, err := os.Stat(progress.Path(dir)); os.IsNotExist(err) {
		progress.Append(dir, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Init,
			Message: "Progress log recreated for project " + dir})
		did = append(did, "created "+progress.FileName)
	}
	rec := record.Of(dir)
	script := filepath.Join(dir, root.InitScript)
	if f, err := os.OpenFile(script, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755); err == nil {
		f.WriteString(initScript)
		f.Close()
		rec.SaveInit()
		did = append(did, "created harness-init.sh (a template: fill it in)")
	}
	marker := filepath.Join(dir, root.ActiveMarker)
	if _, err := os.Stat(marker); os.IsNotExist(err) {
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot create %s: %v", marker, err))
		}
		rec.SetActive(true)
		lock.Prepare(dir)
		did = append(did, "activated the hooks ("+root.ActiveMarker+")")
	}
	if m, _ := rec.Mark(); m.Cancelled != "" {
		rec.SetCancelled("")
		progress.Append(dir, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Init, Message: "Run switched on again by the user (cancelled at " + m.Cancelled + ")"})
		did = append(did, "ended the cancel of "+m.Cancelled)
	}
	if !*noExclude {
		if added := excludeFromGit(dir); added {
			did = append(did, "listed the harness files in .git/info/exclude")
		}
	}
	if len(did) == 0 {
		fmt.Fprintf(e.Stdout, "harness: already initialized in %s (%d tasks); nothing changed\n", dir, len(s.Tasks))
		return ExitOK
	}
	fmt.Fprintf(e.Stdout, "harness: initialized %s\n", dir)
	for _, d := range did {
		fmt.Fprintln(e.Stdout, "  "+d)
	}
	if len(s.Tasks) == 0 {
		fmt.Fprintln(e.Stdout, "next: harness add \"TITLE\" --validate \"COMMAND\"")
	}
	return ExitOK
}

// excludeFromGit adds the harness files to the repository's local exclude
// file (never to the user's .gitignore). It reports whether it added lines.
func excludeFromGit(dir string) bool {
	out, err := git.Run(dir, "rev-parse", "--git-path", "info/exclude")
	if err != nil {
		return false
	}
	path := strings.TrimSpace(out)
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	prefix := ""
	if top, err := git.Run(dir, "rev-parse", "--show-prefix"); err == nil {
		prefix = strings.TrimSpace(top)
	}
	old, _ := safefile.ReadFile(path, 16<<20)
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add bytes.Buffer
	for _, f := range harnessFiles {
		pat := "/" + prefix + f
		if !have[pat] {
			add.WriteString(pat + "\n")
		}
	}
	if add.Len() == 0 {
		return false
	}
	os.MkdirAll(filepath.Dir(path), 0o755)
	f, err := safefile.Append(path, 0o644)
	if err != nil {
		return false
	}
	defer f.Close()
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		f.WriteString("\n")
	}
	if len(old) == 0 || !bytes.Contains(old, []byte("# harness")) {
		f.WriteString("# harness state files (managed by the harness command)\n")
	}
	_, err = f.Write(add.Bytes())
	return err == nil
}
