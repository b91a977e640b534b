// Package recovery is the protocol's Context Window Recovery decision matrix:
// given a task found in_progress at session start, it gathers the facts
// (uncommitted changes? commits naming the task since it started?
// checkpoints?) and says which row applies. Callers carry the row out: the
// session-start hook the deterministic row, `harness recover` all of them.
package recovery

import (
	"fmt"
	"strings"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/state"
)

// Facts are what the matrix looks at.
type Facts struct {
	Uncommitted []string     // changed paths, harness files excluded
	TaskCommits []git.Commit // commits since started_at_commit naming the task
	Checkpoints int
	BaseMissing bool // started_at_commit is empty or not a commit
}

// Assess gathers the facts for t in the work tree workDir whose state root is
// stateRoot.
func Assess(workDir, stateRoot string, t *state.Task) (Facts, error) {
	f := Facts{Checkpoints: len(t.Checkpoints)}
	changes, err := git.Changes(workDir, stateRoot)
	if err != nil {
		return f, err
	}
	f.Uncommitted = changes
	if !git.CommitExists(workDir, t.StartedAtCommit) {
		f.BaseMissing = true
		return f, nil
	}
	f.TaskCommits, err = git.CommitsNaming(workDir, t.StartedAtCommit, t.ID)
	return f, err
}

// Row is a row of the decision matrix.
type Row int

const (
	// NoProgress: no changes, no commits, no checkpoints: mark failed
	// [SESSION_TIMEOUT] No progress detected.
	NoProgress Row = iota
	// CheckpointsOnly: no changes, no commits, some checkpoints: the files
	// cannot reflect the checkpoints (nothing changed since the base), so
	// the work was lost unless the agent confirms otherwise.
	CheckpointsOnly
	// CommittedOnly: commits, no uncommitted changes: validate; pass
	// completes, fail rolls back.
	CommittedOnly
	// UncommittedOnly: changes, no commits: validate with the changes
	// present; pass commits and completes, fail rolls back.
	UncommittedOnly
	// Both: changes and commits: commit the changes, then validate.
	Both
)

// Decide returns the row for f.
func Decide(f Facts) Row {
	dirty, committed := len(f.Uncommitted) > 0, len(f.TaskCommits) > 0
	switch {
	case dirty && committed:
		return Both
	case dirty:
		return UncommittedOnly
	case committed:
		return CommittedOnly
	case f.Checkpoints > 0:
		return CheckpointsOnly
	}
	return NoProgress
}

// NeedsValidation reports whether carrying out the row runs the task's
// validation command.
func (r Row) NeedsValidation() bool { return r == CommittedOnly || r == UncommittedOnly || r == Both }

func (r Row) String() string {
	return [...]string{"no-progress", "checkpoints-only", "committed", "uncommitted", "committed+uncommitted"}[r]
}

// Summary describes the facts in one short phrase for logs and context.
func (f Facts) Summary() string {
	var parts []string
	parts = append(parts, fmt.Sprintf("uncommitted=%d", len(f.Uncommitted)))
	parts = append(parts, fmt.Sprintf("task_commits=%d", len(f.TaskCommits)))
	parts = append(parts, fmt.Sprintf("checkpoints=%d", f.Checkpoints))
	if f.BaseMissing {
		parts = append(parts, "base_missing")
	}
	return strings.Join(parts, " ")
}
