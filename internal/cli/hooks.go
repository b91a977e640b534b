package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/settings"
)

var hooksVerb = &command{
	name:    "hooks",
	args:    "install|uninstall|status|dirs [--settings FILE | --project DIR] [--bin-dir DIR] [--dry-run]",
	summary: "register the harness hooks in a Claude Code settings.json, remove them, check them, or list the directories they run from",
	run:     runHooks,
}

func runHooks(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	file := fs.String("settings", "", "the settings `FILE` to edit (default: $HOME/.claude/settings.json)")
	project := fs.String("project", "", "edit `DIR`/.claude/settings.json, the project's shared settings, instead")
	binDir := fs.String("bin-dir", "", "the `DIR` holding the hook executables (default: the directory of this harness)")
	dryRun := fs.Bool("dry-run", false, "show what would change and write nothing")
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) != 1 {
		return e.fail(usageErr(c, "expected one of install, uninstall, status, dirs"))
	}
	if *file != "" && *project != "" {
		return e.fail(usageErr(c, "--settings and --project exclude each other"))
	}
	path, scope, err := e.settingsFile(*file, *project)
	if err != nil {
		return e.fail(err)
	}
	switch pos[0] {
	case "install":
		dir, err := e.binDir(*binDir)
		if err != nil {
			return e.fail(err)
		}
		if missing := settings.Missing(dir); len(missing) > 0 && !*dryRun {
			return e.fail(failure.New(failure.EnvSetup, "%s lacks the hook executables %s", dir, strings.Join(missing, ", ")).
				WithHint("build them there with `scripts/build.sh %s`, or point --bin-dir at the directory that holds them", dir))
		}
		r, err := settings.Install(path, dir, *dryRun)
		if err != nil {
			return e.fail(err)
		}
		e.report("install", r, *dryRun)
		if settings.HooksDisabled(r.After) {
			fmt.Fprintf(e.Stderr, "WARN %s sets \"disableAllHooks\": true, so Claude Code runs none of these hooks\nhint: remove that key from the file yourself: it is Claude Code's switch for every hook, and the install leaves it as it is\n", r.Path)
		}
		return ExitOK
	case "uninstall":
		if *binDir != "" {
			return e.fail(usageErr(c, "uninstall removes our entries wherever they point: drop --bin-dir"))
		}
		r, err := settings.Uninstall(path, *dryRun)
		if err != nil {
			return e.fail(err)
		}
		e.report("uninstall", r, *dryRun)
		return ExitOK
	case "status":
		if *dryRun {
			return e.fail(usageErr(c, "status writes nothing: drop --dry-run"))
		}
		return e.hooksStatus(path, scope, *binDir)
	case "dirs":
		if *dryRun || *binDir != "" {
			return e.fail(usageErr(c, "dirs takes only --settings or --project"))
		}
		return e.hooksDirs(path)
	}
	return e.fail(usageErr(c, "unknown action %q: expected install, uninstall, status or dirs", pos[0]))
}

// settingsFile resolves the file a hooks action works on, and the flag that
// names it again in hints.
func (e *Env) settingsFile(file, project string) (path, scope string, err error) {
	switch {
	case file != "":
		path = e.abs(file)
		return path, "--settings " + settings.Quote(path), nil
	case project != "":
		dir := e.abs(project)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", "", failure.New(failure.Config, "--project %s: no such directory", dir)
		}
		return filepath.Join(dir, ".claude", "settings.json"), "--project " + settings.Quote(dir), nil
	}
	home := os.Getenv("HOME")
	if home == "" {
		return "", "", failure.New(failure.EnvSetup, "HOME is not set, so the user settings file cannot be found").
			WithHint("set HOME, or name the file with --settings FILE")
	}
	return filepath.Join(home, ".claude", "settings.json"), "", nil
}

// binDir resolves --bin-dir, by default the directory of the running
// harness, where scripts/build.sh and install.sh put the hooks beside it.
func (e *Env) binDir(flag string) (string, error) {
	if flag != "" {
		return e.abs(flag), nil
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", failure.Wrap(failure.EnvSetup, err, "cannot tell where this harness executable is: %v", err).
			WithHint("name the directory holding the hook executables with --bin-dir DIR")
	}
	return filepath.Dir(exe), nil
}

func (e *Env) abs(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.Cwd, p)
	}
	return filepath.Clean(p)
}

func (e *Env) report(action string, r *settings.Result, dryRun bool) {
	r.Print(e.Stdout, action, dryRun)
}

func (e *Env) hooksStatus(path, scope, binDir string) int {
	if binDir != "" {
		binDir = e.abs(binDir)
	}
	doc, err := settings.Read(path)
	if err != nil {
		return e.fail(err)
	}
	findings, err := settings.Check(doc, binDir, path)
	if err != nil {
		return e.fail(err)
	}
	w := e.Stdout
	note := ""
	if doc == nil {
		note = " (no such file)"
	}
	fmt.Fprintf(w, "harness hooks status: %s%s\n", path, note)
	bad := 0
	for _, f := range findings {
		label, detail := "ok", ""
		if len(f.Entries) > 0 {
			detail = f.Entries[0].Command
		}
		if len(f.Problems) > 0 {
			bad++
			label = "wrong"
			if len(f.Entries) == 0 {
				label = "missing"
			}
			if detail != "" {
				detail += ": "
			}
			detail += strings.Join(f.Problems, "; ")
		}
		fmt.Fprintf(w, "  %-7s %-*s %s\n", label, settings.EventWidth(), f.Hook.Event, detail)
	}
	if settings.HooksDisabled(doc) {
		fmt.Fprintln(w, "WARN \"disableAllHooks\": true in this file: Claude Code runs no hooks at all")
		bad++
	}
	if bad > 0 {
		install := "harness hooks install"
		if scope != "" {
			install += " " + scope
		}
		if binDir != "" {
			install += " --bin-dir " + settings.Quote(binDir)
		}
		fmt.Fprintf(e.Stderr, "hint: `%s` registers them (or ./install.sh from the harness repository)\n", install)
		return ExitNegative
	}
	return ExitOK
}

// hooksDirs prints the directories our entries in the settings file run
// their executables from, one a line: install.sh asks it which bin
// directories a settings file still uses.
func (e *Env) hooksDirs(path string) int {
	doc, err := settings.Read(path)
	if err != nil {
		return e.fail(err)
	}
	dirs, err := settings.Dirs(doc, path)
	if err != nil {
		return e.fail(err)
	}
	for _, d := range dirs {
		fmt.Fprintln(e.Stdout, d)
	}
	return ExitOK
}
