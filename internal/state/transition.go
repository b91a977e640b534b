package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// Transition is the judgement of a change to the tasks file that the
// harness's trusted side (a hook) did not make and the record does not
// hold: a verb the agent ran where it could not write the record (the
// sandboxed level), or a script. The hooks judge every such change by the
// same rules, whoever made it: a change the protocol's verbs could have
// made is adopted; anything else is put back.
type Transition struct {
	// Broken names the first rule the change breaks, "" when it keeps
	// them all.
	Broken string
	// Completed lists the tasks the change completed: legal only once the
	// trusted side has seen their validation pass (its own run, or the
	// verification gate's).
	Completed []string
	// Added lists the tasks the change added; their stored commands are
	// judged by the caller's policy (allowed_commands, harness files).
	Added []string
}

// JudgeTransition applies the protocol's transition rules to a change of
// the tasks file from before to after made by the agent's side: what its
// verbs may do (claim, checkpoint, validate, fail, renew, recover, add,
// edit of a title or a priority, a validation where there was none) and
// nothing a person's verbs alone may do (remove, reopen, change the
// policies or what done means). It has no side effects.
func JudgeTransition(before, after *State) Transition {
	var tr Transition
	if after.SessionCount < before.SessionCount {
		tr.Broken = fmt.Sprintf("session_count may not go down (%d → %d)", before.SessionCount, after.SessionCount)
		return tr
	}
	if !sameConfig(before.raw, after.raw) {
		tr.Broken = "session_config may not be changed from inside a session (it holds the policies; a person changes them)"
		return tr
	}
	afterByID := make(map[string]*Task, len(after.Tasks))
	for i := range after.Tasks {
		afterByID[after.Tasks[i].ID] = &after.Tasks[i]
	}
	beforeIDs := make(map[string]bool, len(before.Tasks))
	for i := range before.Tasks {
		b := &before.Tasks[i]
		beforeIDs[b.ID] = true
		a := afterByID[b.ID]
		if a == nil {
			tr.Broken = fmt.Sprintf("task %s was removed (removing a task is a person's decision: `harness remove`)", b.ID)
			return tr
		}
		if why := taskTransition(b, a); why != "" {
			tr.Broken = why
			return tr
		}
		if b.Status != Completed && a.Status == Completed {
			tr.Completed = append(tr.Completed, a.ID)
		}
	}
	for i := range after.Tasks {
		a := &after.Tasks[i]
		if beforeIDs[a.ID] {
			continue
		}
		if a.Status != Pending || a.Attempts != 0 || len(a.Checkpoints) > 0 || len(a.ErrorLog) > 0 ||
			a.ClaimedBy != "" || a.StartedAtCommit != "" || a.CompletedAt != "" {
			tr.Broken = fmt.Sprintf("task %s was added with work already recorded (a new task is pending, with no attempts, claim or checkpoints: `harness add`)", a.ID)
			return tr
		}
		tr.Added = append(tr.Added, a.ID)
	}
	return tr
}

// taskTransition names the rule a change of one task from b to a breaks,
// "" when none.
func taskTransition(b, a *Task) string {
	switch {
	case a.MaxAttempts != b.MaxAttempts:
		return fmt.Sprintf("max_attempts of %s may not change (a person's decision: `harness edit --max-attempts`)", b.ID)
	case !slices.Equal(a.DependsOn, b.DependsOn):
		return fmt.Sprintf("depends_on of %s may not change from inside a session (a person's decision: `harness edit --depends-on`)", b.ID)
	case !slices.Equal(a.AllowedPaths, b.AllowedPaths):
		return fmt.Sprintf("allowed_paths of %s may not change (it is the task's scope lock)", b.ID)
	case a.Cleanup != b.Cleanup:
		return fmt.Sprintf("on_failure.cleanup of %s may not change from inside a session", b.ID)
	case a.TimeoutSeconds != b.TimeoutSeconds:
		return fmt.Sprintf("the validation timeout of %s may not change", b.ID)
	case !slices.Equal(a.Acceptance, b.Acceptance):
		return fmt.Sprintf("the acceptance criteria of %s may not change from inside a session (a person's decision: `harness edit --accept`)", b.ID)
	case a.Source != b.Source || a.Description != b.Description:
		return fmt.Sprintf("the source and description of %s may not change from inside a session (a person imports the plan again)", b.ID)
	case a.Command != b.Command && strings.TrimSpace(b.Command) != "":
		return fmt.Sprintf("the validation of %s may not change (it is the objective check of the task)", b.ID)
	case a.Attempts < b.Attempts:
		return fmt.Sprintf("attempts of %s may not go down (%d → %d)", b.ID, b.Attempts, a.Attempts)
	case !grows(b.ErrorLog, a.ErrorLog):
		return fmt.Sprintf("error_log of %s may only grow", b.ID)
	case !grows(b.Checkpoints, a.Checkpoints):
		return fmt.Sprintf("checkpoints of %s may only grow", b.ID)
	}
	if a.Status == b.Status && a.Status != InProgress && claimMoved(b, a) {
		return fmt.Sprintf("the claim of %s may not change while it is %s", b.ID, b.Status)
	}
	switch b.Status {
	case Completed:
		// Only the trusted side reopens a completed task (the
		// verification gate), and nothing else of it changes.
		if a.Status != Completed || a.CompletedAt != b.CompletedAt || a.Attempts != b.Attempts {
			return fmt.Sprintf("%s is completed: only the verification gate reopens it (a person: `harness retry`)", b.ID)
		}
	case Failed:
		if b.PermanentlyFailed() && a.Status != Failed {
			return fmt.Sprintf("%s failed for good (%d/%d attempts): reopening it is a person's decision (`harness retry %s`)", b.ID, b.Attempts, b.MaxAttempts, b.ID)
		}
	}
	if a.Status == Completed && b.Status != Completed && strings.TrimSpace(a.Command) == "" {
		return fmt.Sprintf("%s has no validation command, so it cannot be completed", b.ID)
	}
	if a.Status == Failed && b.Status != Failed && !(len(a.ErrorLog) > len(b.ErrorLog)) {
		return fmt.Sprintf("%s was marked failed without an error_log entry (`harness fail %s --category C MSG`)", b.ID, b.ID)
	}
	return ""
}

// claimMoved reports whether the claim of a task (who holds it, since
// when, its base commit, its lease) changed from b to a.
func claimMoved(b, a *Task) bool {
	return a.ClaimedBy != b.ClaimedBy || a.LeaseExpiresAt != b.LeaseExpiresAt || a.StartedAtCommit != b.StartedAtCommit && a.StartedAtCommit != ""
}

// sameConfig reports whether two tasks files hold the same session_config,
// insignificant white space aside.
func sameConfig(a, b []byte) bool {
	return SameJSON(gjson.GetBytes(a, "session_config").Raw, gjson.GetBytes(b, "session_config").Raw)
}

// SameJSON compares two JSON texts ignoring insignificant white space.
func SameJSON(a, b string) bool {
	if a == b {
		return true
	}
	var x, y bytes.Buffer
	if json.Compact(&x, []byte(a)) != nil || json.Compact(&y, []byte(b)) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}
