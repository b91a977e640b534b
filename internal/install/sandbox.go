package install

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/settings"
)

// The sandboxed level of trust (`harness install --sandbox`): Claude Code's
// own OS sandbox confines every command the agent runs, and the paths the
// harness trusts are read-only inside it, so a command cannot rewrite the
// record, the executables, the settings or the skill at all (the standard
// level only notices such a change and puts it back). The hooks run outside
// the sandbox and keep writing the record.

// sandboxPlan is what the sandbox is asked to protect: the record, the
// executables, the settings, the skill, and the lock directory. A verb in
// the sandbox takes the transaction lock on a file the hooks made (an
// flock needs a file it can open, not a directory it can write), so no
// command of the agent's can break a lock or plant one.
func (r *run) sandboxPlan() settings.Sandbox {
	records := r.RecordDir
	if records == "" {
		records = filepath.Join(r.Home, ".local", "state", "harness", "records")
	}
	locks := r.LockDir
	if locks == "" {
		locks = lock.Dir()
	}
	return settings.Sandbox{
		DenyWrite: []string{settings.RealPath(records), settings.RealPath(r.BinDir), settings.RealPath(r.settings), settings.RealPath(r.skillDir), settings.RealPath(locks)},
	}
}

// checkSandbox refuses --sandbox where it cannot hold.
func (r *run) checkSandbox() error {
	if r.Project != "" {
		return failure.New(failure.Usage, "--sandbox goes with the user scope, not --project: Claude Code holds allowUnsandboxedCommands: false closed when the user's settings say so, not when only a project's do").
			WithHint("run %s --sandbox without --project", r.Rerun)
	}
	return nil
}

// sandbox writes the sandbox settings beside the hooks, or in a dry run
// says what it would write. The record and lock directories are made when
// missing: the sandbox can make read-only only a path that exists.
func (r *run) sandbox() error {
	plan := r.sandboxPlan()
	if !r.DryRun {
		if err := os.MkdirAll(plan.DenyWrite[0], 0o700); err != nil {
			return failure.Wrap(failure.EnvSetup, err, "cannot create the record directory %s: %v", plan.DenyWrite[0], err)
		}
		locks := plan.DenyWrite[len(plan.DenyWrite)-1]
		if err := os.MkdirAll(locks, 0o700); err != nil {
			return failure.Wrap(failure.EnvSetup, err, "cannot create the lock directory %s: %v", locks, err)
		}
	}
	res, err := settings.EnableSandbox(r.settings, plan, r.DryRun)
	if err != nil {
		return err
	}
	r.printSandbox(res, "sandbox")
	return nil
}

// unsandbox removes what sandbox added.
func (r *run) unsandbox() error {
	res, err := settings.DisableSandbox(r.settings, r.DryRun)
	if err != nil {
		return err
	}
	if res.Changed() {
		r.printSandbox(res, "sandbox off")
	}
	return nil
}

func (r *run) printSandbox(res *settings.Result, what string) {
	prefix := ""
	if r.DryRun {
		prefix = "would change: "
	}
	if !res.Changed() {
		r.say("%s: %s already holds the sandbox settings; nothing changed", what, res.Path)
		return
	}
	r.say("%s: %s", what, res.Path)
	for _, c := range res.Changes {
		fmt.Fprintf(r.Out, "  %s%s\n", prefix, c)
	}
}

// SandboxOnly writes only the sandbox settings in the user's settings.json, for the Claude Code plugin,
// whose executables, hooks and skill come with it: the directory
// protected is the plugin's root when the executables are a plugin's
// bin/ (its hooks/launch.sh runs them), else the executables' directory.
func SandboxOnly(o Options) error {
	r, err := o.prepare()
	if err != nil {
		return err
	}
	if err := r.checkSandbox(); err != nil {
		return err
	}
	if r.DryRun {
		r.say("dry run: nothing will be changed")
	}
	from, err := filepath.Abs(r.From)
	if err != nil {
		return failure.Wrap(failure.EnvSetup, err, "cannot tell where the executables are: %v", err)
	}
	r.BinDir = from
	if root := filepath.Dir(from); filepath.Base(from) == "bin" {
		if _, err := os.Stat(filepath.Join(root, ".claude-plugin", "plugin.json")); err == nil {
			r.BinDir = root
		}
	}
	if err := r.sandbox(); err != nil {
		return err
	}
	if r.DryRun {
		r.say("dry run: nothing was changed")
	}
	return nil
}
