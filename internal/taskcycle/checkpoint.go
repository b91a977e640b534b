package taskcycle

import (
	"fmt"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

// Checkpoint records step of total for the in-progress task id: a
// checkpoints entry, a CHECKPOINT line, and a renewed lease.
func (w *Worker) Checkpoint(id string, step, total int, description string) (state.Task, error) {
	description = progress.OneLine(description)
	if total < 1 || step < 1 || step > total {
		return state.Task{}, failure.New(failure.Usage, "step %d/%d: need 1 ≤ M ≤ N", step, total).WithHint("harness checkpoint %s 2/4 \"what was done\"", failure.ShellArg(id))
	}
	if description == "" {
		return state.Task{}, failure.New(failure.Usage, "empty checkpoint description").WithHint("say what was done: harness checkpoint %s %d/%d \"routes added, tests pending\"", failure.ShellArg(id), step, total)
	}
	now := w.Now()
	var rec state.Task
	_, err := statecache.Update(w.Root, func(s *state.State) error {
		t := s.Task(id)
		if t == nil {
			return unknown(s, id)
		}
		if err := w.own(s, t); err != nil {
			return err
		}
		if err := w.checkSession(s); err != nil {
			return err
		}
		t.Checkpoints = append(t.Checkpoints, state.Checkpoint{Step: step, Total: total, Description: description, Timestamp: stamp(now)})
		t.LeaseExpiresAt = stamp(now.Add(w.Lease))
		rec = *t
		return progress.Append(w.Root, progress.Entry{Time: now, Session: s.SessionCount, Type: progress.Checkpoint, TaskID: id,
			Message: fmt.Sprintf(`step=%d/%d "%s"`, step, total, strings.ReplaceAll(description, `"`, `'`))})
	})
	return rec, err
}

// Renew pushes lease_expires_at to now+Lease for this worker's claims: task
// id, or all of them when id is empty (in exclusive mode, every task in
// progress: the session owns them). It returns the renewed tasks.
func (w *Worker) Renew(id string) ([]state.Task, error) {
	return w.renew(id, false)
}

// Heartbeat renews this worker's claims whose lease is past its first half,
// and does nothing, not even take the lock, when none is: it is cheap enough
// to call before every tool use.
func (w *Worker) Heartbeat() error {
	s, err := state.Load(w.Root)
	if err != nil {
		return err
	}
	if len(w.due(s, true)) == 0 {
		return nil
	}
	_, err = w.renew("", true)
	return err
}

func (w *Worker) renew(id string, onlyDue bool) ([]state.Task, error) {
	now := w.Now()
	var renewed []state.Task
	_, err := statecache.Update(w.Root, func(s *state.State) error {
		if id != "" {
			t := s.Task(id)
			if t == nil {
				return unknown(s, id)
			}
			if err := w.own(s, t); err != nil {
				return err
			}
		}
		for _, t := range w.due(s, onlyDue) {
			if id != "" && t.ID != id {
				continue
			}
			t.LeaseExpiresAt = stamp(now.Add(w.Lease))
			renewed = append(renewed, *t)
		}
		return nil
	})
	return renewed, err
}

// due returns this worker's claims, or with onlyDue those whose remaining
// lease is under half of Lease.
func (w *Worker) due(s *state.State, onlyDue bool) []*state.Task {
	now := w.Now()
	var out []*state.Task
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if t.Status != state.InProgress || s.Concurrent() && t.ClaimedBy != w.ID {
			continue
		}
		if onlyDue {
			exp, err := time.Parse(time.RFC3339, t.LeaseExpiresAt)
			if err == nil && exp.Sub(now) > w.Lease/2 {
				continue
			}
		}
		out = append(out, t)
	}
	return out
}
