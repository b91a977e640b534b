// Package project is the state root one hook call (or one verb) acts on,
// opened once: where it is, where its record is, and the facts the steps
// read of it (the record's mark, the summary of the tasks file), each read
// at most once and only when a step first needs it. The value is handed
// down to every step (the integrity check, the gate, the judge) in place of
// a directory each step would resolve and read again.
//
// A fact read is kept until it may have changed: this process wrote the
// record (record.MarkWrites moved), or the caller says another process may
// have (Reread: after it took the transaction lock, after a project
// command ran).
package project

import (
	"os"

	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/settings"
	"github.com/harness-agent/harness/internal/statecache"
)

// Project is one state root as one process sees it.
type Project struct {
	// Root is the state root: absolute, symlinks resolved (root.Find).
	Root string

	record     record.Record
	recordRead bool

	mark     record.Mark
	markOK   bool
	markRead bool
	markAt   uint64 // record.MarkWrites when the mark was read

	sum     *statecache.Summary
	sumErr  error
	sumRead bool
	sumAt   uint64

	trust     settings.Trust
	trustRead bool
}

// Open is the project whose state root is dir. Nothing is read yet.
func Open(dir string) *Project { return &Project{Root: dir} }

// Find opens the project cwd is in (root.Find), nil when there is none.
func Find(cwd string) *Project {
	dir := root.Find(cwd)
	if dir == "" {
		return nil
	}
	return Open(dir)
}

// Record is the project's record, located once (its Dir is "" when no
// state directory can be named: no HOME).
func (p *Project) Record() record.Record {
	if !p.recordRead {
		p.record, p.recordRead = record.Of(p.Root), true
	}
	return p.record
}

// Mark is the record's mark of the project (Record.Mark); ok is false
// when there is no record.
func (p *Project) Mark() (record.Mark, bool) {
	if !p.markRead || p.markAt != record.MarkWrites() {
		p.markAt = record.MarkWrites()
		p.mark, p.markOK = p.Record().Mark()
		p.markRead = true
	}
	return p.mark, p.markOK
}

// Recorded reports whether the project has a record of its own: a mark
// whose root is this state root.
func (p *Project) Recorded() bool {
	m, ok := p.Mark()
	return ok && m.Root == p.Root
}

// Summary is the hooks' summary of the tasks file (statecache.Load).
func (p *Project) Summary() (*statecache.Summary, error) {
	if !p.sumRead || p.sumAt != record.MarkWrites() {
		p.sumAt = record.MarkWrites()
		p.sum, p.sumErr = statecache.Load(p.Root)
		p.sumRead = true
	}
	return p.sum, p.sumErr
}

// Reread forgets every fact read: another process may have changed them
// since (the caller just took the transaction lock, or a command ran).
func (p *Project) Reread() { p.markRead, p.sumRead = false, false }

// Active reports whether the hooks are switched on (root.Active). It is
// not kept: the marker is one stat, and a step may remove it.
func (p *Project) Active() bool { return root.Active(p.Root) }

// Paused reports whether a person paused the run (root.Paused).
func (p *Project) Paused() bool { return root.Paused(p.Root) }

// Cancelled reports whether a person cancelled the run (`harness cancel`,
// kept in the record): it stays off, whatever put the marker back, until a
// person's `harness init`.
func (p *Project) Cancelled() bool {
	m, ok := p.Mark()
	return ok && m.Cancelled != ""
}

// Trust is the level of trust in force for the project (settings.TrustOf):
// what the settings Claude Code merges in the launch directory
// (CLAUDE_PROJECT_DIR, else the state root) say, for the user whose home
// this is. Read once.
func (p *Project) Trust() settings.Trust {
	if !p.trustRead {
		dir := os.Getenv("CLAUDE_PROJECT_DIR")
		if dir == "" {
			dir = p.Root
		}
		home, _ := os.UserHomeDir()
		p.trust, p.trustRead = settings.TrustOf(home, dir, record.Base()), true
	}
	return p.trust
}
