package taskcycle

// Fencing: in concurrent mode a claim carries a generation (claim_generation,
// one more at every claim of the task). The claim a worker's tree holds is
// written in that tree's private git directory when it claims; a later
// write from that tree to a task whose claim has moved on (its lease
// expired and the task was reaped or claimed again) is refused and logged,
// never applied.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/remote"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/state"
)

// heldFile is the name, in a work tree's private git directory, of the
// claim the tree's worker took last.
const heldFile = "harness-claim"

// heldClaim is the claim a work tree's worker took last.
type heldClaim struct {
	ID         string
	Generation int
	Worker     string
}

func heldPath(top string) string {
	dir, err := git.Run(top, "rev-parse", "--absolute-git-dir")
	if err != nil || dir == "" {
		return ""
	}
	return filepath.Join(dir, heldFile)
}

// writeHeld records the claim a worker just took in its tree. A failure is
// not fatal: fencing still holds through claimed_by and sameClaim, only the
// log line naming the stale writer is lost.
func writeHeld(top string, h heldClaim) {
	if p := heldPath(top); p != "" {
		os.WriteFile(p, []byte(fmt.Sprintf("%s\n%d\n%s\n", h.ID, h.Generation, h.Worker)), 0o644)
	}
}

// readHeld is the claim the work tree holding cwd took last, if any.
func readHeld(cwd string) (heldClaim, bool) {
	top, err := git.Toplevel(cwd)
	if err != nil {
		return heldClaim{}, false
	}
	p := heldPath(top)
	if p == "" {
		return heldClaim{}, false
	}
	b, err := safefile.ReadFile(p, 4<<10)
	if err != nil {
		return heldClaim{}, false
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 {
		return heldClaim{}, false
	}
	g, err := strconv.Atoi(lines[1])
	if err != nil {
		return heldClaim{}, false
	}
	return heldClaim{ID: lines[0], Generation: g, Worker: lines[2]}, true
}

// fenced returns the refusal of a write from this worker's tree to t when
// the tree's claim on t is stale (t was claimed again since, or its claim
// ended), and logs it; nil when the tree holds no claim on t.
func (w *Worker) fenced(s *state.State, t *state.Task) error {
	h, ok := readHeld(w.Cwd)
	if !ok || h.ID != t.ID || h.Worker != w.ID {
		return nil
	}
	reaped := t.Status == state.Failed && strings.HasPrefix(lastError(t), "["+failure.SessionTimeout+"]")
	if t.Generation == h.Generation && !reaped && !(t.Status == state.InProgress && t.ClaimedBy != w.ID) {
		return nil // still this tree's claim, or one it ended itself
	}
	w.logRefusal(s, t.ID, w.ID, h.Generation, t)
	w.offerWork(s, t.ID, h.Generation)
	return failure.New(failure.SessionTimeout, "%s: this worker's claim on %s was taken over (generation %d, now %d): nothing recorded", t.ID, t.ID, h.Generation, t.Generation).
		WithHint("its lease expired before this write; leave the task to its new claim and take the next one with `harness claim` (renew long steps with `harness renew`)")
}

// moved is the refusal of a write to a claim that changed while the
// command ran (cur is the task now, held what the writer holds): logged
// when the writer lost its claim, since what it did is not recorded.
func (w *Worker) moved(s *state.State, cur, held *state.Task) error {
	if cur != nil && s.Concurrent() {
		w.logRefusal(s, held.ID, orNone(held.ClaimedBy), held.Generation, cur)
		if held.ClaimedBy == w.ID {
			w.offerWork(s, held.ID, held.Generation)
		}
	}
	return changed(cur, held.ID)
}

// logRefusal logs the refusal of a write by holder, whose claim on id was
// generation gen, to the task now cur.
func (w *Worker) logRefusal(s *state.State, id, holder string, gen int, cur *state.Task) {
	now := fmt.Sprintf("%s, generation %d", cur.Status, cur.Generation)
	if cur.ClaimedBy != "" {
		now += ", claimed by " + cur.ClaimedBy
	}
	progress.Append(w.Root, progress.Entry{Time: w.Now(), Session: s.SessionCount, Type: progress.Lock,
		Message: fmt.Sprintf("%s write refused: %s held generation %d, the task has moved on (now %s)", id, holder, gen, now)})
}

// offerWork, on a job shared through a remote, publishes the work of this
// tree, whose claim on id (generation gen) was taken over, as a snapshot
// ref on the remote, and logs where: a machine cut off past its lease
// keeps nothing to itself, and nothing of it is merged unasked.
func (w *Worker) offerWork(s *state.State, id string, gen int) {
	rc, ok := state.Shared(w.Root)
	if !ok {
		return
	}
	ref := fmt.Sprintf("refs/harness/snapshots/%s/%s-g%d", git.RefName(w.ID), git.RefName(id), gen)
	used, commit, err := git.Snapshot(w.Cwd, w.Root, ref, fmt.Sprintf("harness: %s's work on %s (generation %d), whose claim was taken over", w.ID, id, gen))
	msg := ""
	switch {
	case err != nil:
		msg = fmt.Sprintf("%s: %s's work could not be saved as a snapshot: %v", id, w.ID, err)
	case rc.Push(w.Root, remote.Update{Ref: used, New: commit}) != nil:
		msg = fmt.Sprintf("%s: %s's work is kept as %s here (the remote %s did not take it)", id, w.ID, used, rc.Remote)
	default:
		msg = fmt.Sprintf("%s: %s's work is offered as %s on %s (commit %s), not merged", id, w.ID, used, rc.Remote, git.Short(commit))
	}
	progress.Append(w.Root, progress.Entry{Time: w.Now(), Session: s.SessionCount, Type: progress.Lock, Message: msg})
}
