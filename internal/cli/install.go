package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/install"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/skill"
)

var installVerb = &command{
	name:    "install",
	args:    "[--bin-dir DIR] [--project DIR] [--sandbox | --sandbox-only] [--dry-run] [--uninstall]",
	summary: "install the harness for Claude Code: these executables in a bin directory (default ~/.claude/harness/bin), the /harness skill, the hooks in settings.json; over an older install it upgrades in place (a person's decision: refused inside a Claude Code session, --dry-run aside)",
	run:     runInstall,
}

func runInstall(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	binDir := fs.String("bin-dir", "", "install the executables in `DIR` (moving them from an earlier install updates the hook entries, and empties the old directory once nothing uses it)")
	project := fs.String("project", "", "project scope: hooks in `DIR`/.claude/settings.json, the skill in DIR/.claude/skills/harness")
	dryRun := fs.Bool("dry-run", false, "print what would be done, change nothing")
	sandbox := fs.Bool("sandbox", false, "also turn on Claude Code's OS sandbox for the agent's commands, with the harness's record, executables, settings and skill read-only inside it (user scope; with --uninstall, remove only that)")
	sandboxOnly := fs.Bool("sandbox-only", false, "write only the sandbox settings of --sandbox, for the Claude Code plugin (its executables, hooks and skill come with it; run this plugin's bin/harness); with --uninstall, remove them")
	uninstall := fs.Bool("uninstall", false, "remove what install added: our hook entries, the skill (if the installer put it there), and the executables once no settings file uses them")
	from := fs.String("from", "", "install the executables in `DIR` (default: the directory of this harness)")
	skillFrom := fs.String("skill", "", "install the skill in `DIR` instead of the one built into this harness")
	as := fs.String("as", "", "name the installer `NAME` in messages (install.sh calls it so)")
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) > 0 {
		return e.fail(usageErr(c, "unexpected argument %q", pos[0]))
	}
	if !*dryRun {
		if err := e.personOnly("install"); err != nil {
			return e.fail(err)
		}
	}
	o := install.Options{Home: os.Getenv("HOME"), DryRun: *dryRun, Version: Version, Skill: skill.FS,
		Name: "harness install", Rerun: "harness install", Out: e.Stdout, Err: e.Stderr,
		Sandbox: *sandbox, RecordDir: record.Base(), LockDir: lock.Dir()}
	if *as == "install.sh" {
		o.Name, o.Rerun = "install.sh", "./install.sh"
	}
	if *binDir != "" {
		o.BinDir = e.abs(*binDir)
	}
	if *project != "" {
		o.Project = e.abs(*project)
	}
	if *skillFrom != "" {
		o.SkillFrom = e.abs(*skillFrom)
	}
	if *sandboxOnly {
		if *sandbox || *binDir != "" || *skillFrom != "" {
			return e.fail(usageErr(c, "--sandbox-only takes only --from, --dry-run and --uninstall"))
		}
		o.Sandbox = true
	}
	switch {
	case *uninstall:
		err = install.Uninstall(o)
	case *sandboxOnly:
		if o.From, err = e.binDir(*from); err == nil {
			err = install.SandboxOnly(o)
		}
	default:
		o.From = *from
		if o.From == "" {
			if o.From, err = e.binDir(""); err != nil {
				return e.fail(err)
			}
		} else {
			o.From = e.abs(o.From)
		}
		err = install.Install(o)
	}
	if err == nil {
		return ExitOK
	}
	if o.Name == "harness install" {
		return e.fail(err)
	}
	var fe *failure.Error
	if !errors.As(err, &fe) {
		fe = failure.Wrap(failure.EnvSetup, err, "%v", err)
	}
	fmt.Fprintf(e.Stderr, "%s: %s\n", o.Name, fe.Text())
	return ExitError
}
