// Package fence runs the project's own commands for the harness: a task's
// validation, on_failure.cleanup, harness-init.sh, the merge queue's checks
// and integration_check, the verification gate's re-runs. Every one of them
// is code the agent may have written, started by a hook, a verb or the
// supervisor with their rights; the fence is the one place that decides
// what it may touch and judges what it did.
//
//   - Around it: the harness files are settled first, the record is held in
//     memory (Record.Hold), and afterwards whatever the command did to the
//     record or the harness files is put back and named (Close), at both
//     levels. The caller throws the command's verdict away when it did.
//   - Under it, at the sandboxed level: where this process could write the
//     record (a hook, a person's terminal, the supervisor: outside Claude
//     Code's sandbox), the command runs confined like the agent's own
//     commands (internal/confine). Where the sandbox cannot be set up, it
//     does not run (validation.Missing with Unconfined saying why).
//     Inside Claude Code's sandbox (the agent's own verbs) the command is
//     already confined and runs as it is.
package fence

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/confine"
	"github.com/harness-agent/harness/internal/integrity"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/settings"
	"github.com/harness-agent/harness/internal/validation"
)

// Fence is one stretch of project commands run for the state root Root.
type Fence struct {
	Root string
	p    *project.Project
	on   bool // the marker was in place when the fence opened
	held *record.Held
	// policy is how commands are confined, nil when they are not;
	// unavailable is why the sandbox cannot be set up, nil when it can.
	policy      *confine.Policy
	unavailable error
}

// Open settles p's harness files, decides whether the commands run
// confined (and, when they do, that the sandbox can be set up), and holds
// the record.
func Open(p *project.Project) *Fence {
	integrity.Settle(p)
	return Hold(p)
}

// Hold is Open for a caller that already holds the transaction lock and
// checks the harness files itself (the guard's completion judge, which runs
// inside integrity's check): nothing is settled, and Record judges only
// the record.
func Hold(p *project.Project) *Fence {
	dir := p.Root
	f := &Fence{Root: dir, p: p, on: p.Active()}
	if f.policy = policyFor(p); f.policy != nil {
		f.unavailable = probe(p.Record(), *f.policy)
	}
	f.held = p.Record().Hold()
	return f
}

// policyFor is the confinement of the project's commands: nil unless the
// level is sandboxed and this process can write the record (it runs
// outside Claude Code's sandbox, so what it starts would too).
func policyFor(pr *project.Project) *confine.Policy {
	t := pr.Trust()
	if t.Level != settings.Sandboxed || !pr.Record().Writable() {
		return nil
	}
	p := confine.Policy{
		Write:   append(confine.TempDirs(), t.AllowWrite...),
		Deny:    append(t.DenyWrite, record.Base()),
		Network: t.Network,
	}
	return &p
}

// Runner is how commands run in dir: confined to dir's tree when the
// fence confines.
func (f *Fence) Runner(dir string) validation.Runner {
	if f.policy == nil {
		return validation.Runner{}
	}
	p := f.policy.ForTree(dir)
	return validation.Runner{Wrap: func(argv []string) ([]string, error) {
		if f.unavailable != nil {
			return nil, f.unavailable
		}
		return p.Wrap(argv)
	}}
}

// probedName is the record's note of the sandbox program that set up a
// sandbox last (its path and stat): while it is the same, a trial run is
// not needed again.
const probedName = "sandbox-probed.txt"

// probe runs `true` under p: bubblewrap's own failure to set up (no user
// namespaces, a mount refused) exits like a failing command would, and
// must not be taken for the command's verdict. A success is noted in the
// record, so the trial costs once per install, not once per command.
func probe(rec record.Record, p confine.Policy) error {
	argv, err := p.Wrap([]string{"true"})
	if err != nil {
		return err
	}
	note := ""
	if fi, err := os.Stat(argv[0]); err == nil {
		note = fmt.Sprintf("%s %d %d\n", argv[0], fi.Size(), fi.ModTime().UnixNano())
	}
	path := rec.Path(probedName)
	if note != "" {
		if had, err := safefile.ReadFile(path, safefile.Small); err == nil && string(had) == note {
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	out, runErr := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	cancel()
	if runErr != nil {
		return fmt.Errorf("%w: %s: %s", confine.ErrUnavailable, confine.Tool, firstLine(out, runErr))
	}
	if note != "" {
		atomicfile.Replace(path, []byte(note), 0o600)
	}
	return nil
}

func firstLine(out []byte, err error) string {
	if l, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n"); l != "" {
		return l
	}
	return err.Error()
}

// Run runs command in dir as validation.Run does, confined when the fence
// confines.
func (f *Fence) Run(ctx context.Context, dir, command string, timeout time.Duration) validation.Result {
	return f.Runner(dir).Run(ctx, dir, command, timeout)
}

// RunAll runs jobs in dir side by side as validation.RunAll does, confined
// when the fence confines.
func (f *Fence) RunAll(ctx context.Context, dir string, jobs []validation.Job) []validation.Done {
	return f.Runner(dir).RunAll(ctx, dir, jobs)
}

// Close judges what the commands did, by naming them for the TAMPER lines:
// a record changed meanwhile is put back from the copy held, then the
// harness files are checked against it (integrity.FenceHeld). A result
// that Tampered means the commands' verdicts do not count.
func (f *Fence) Close(by string) integrity.Result {
	return integrity.FenceHeld(f.p, by, f.on, f.held)
}

// Hint is what to do when the sandbox cannot be set up.
func Hint() string {
	return confine.Hint + "; or leave the sandboxed level (`harness install --sandbox --uninstall`)"
}

// Record judges what the commands did to the record
// (integrity.HeldRecord): "" when nothing, or only what a harness write of
// another process could have made meanwhile (its completions left to the
// verification gate); otherwise the record is put back as held, a TAMPER
// line names by, and the answer says what was changed. The commands'
// verdicts then do not count.
func (f *Fence) Record(by string) string {
	if rp, put := integrity.HeldRecord(f.p, by, f.held); put {
		return rp.File + " " + rp.What
	}
	return ""
}
