// Package trail reads a shared job's audit trail: the histories of the
// remote's refs/harness/state and of each task's ref
// (refs/harness/tasks/<id>), one commit per change of each ref, each
// naming the machine, worker and command that made it. Replaying it checks
// what the compare-and-swap pushes promise: every change parses, no task
// was held by two workers at once (a claim moves to a new holder only once
// the old one's lease ran out, with a higher fencing generation), and no
// task was integrated twice. A task's life is the state ref's history
// until its ref has a commit, then its ref's: once a task has a ref, the
// state's entry of it no longer counts.
package trail

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/remote"
	"github.com/harness-agent/harness/internal/state"
)

// Step is one change of the trail, as replayed.
type Step struct {
	remote.Change
	Events []string // what it did to the tasks, in words
}

// Report is a replayed trail.
type Report struct {
	Steps      []Step
	Violations []string       // broken promises, with the commit that broke them
	Final      []byte         // the tasks file of the last change
	Rejected   map[string]int // pushes each machine lost, from its log's LOCK lines
	TaskRefs   int            // how many tasks have a ref of their own
}

// Replay walks the trail fetched into the repository of dir.
func Replay(dir string) (*Report, error) {
	changes, err := remote.Changes(dir)
	if err != nil {
		return nil, err
	}
	r := &Report{Rejected: map[string]int{}}
	specs := make([]string, len(changes))
	since := map[string]time.Time{} // each task's ref's first change
	for i, c := range changes {
		specs[i] = c.Commit + ":" + remote.TasksFile
		if id, ok := strings.CutPrefix(c.Ref, remote.TaskRefs); ok {
			specs[i] = c.Commit + ":" + remote.TaskFile
			if _, seen := since[id]; !seen {
				since[id] = c.Time
			}
		}
	}
	r.TaskRefs = len(since)
	blobs := remote.ReadAll(dir, specs)
	prev := map[string]*state.Task{}
	integrated := map[string]string{}
	for i, c := range changes {
		step := Step{Change: c}
		var cur []*state.Task
		if id, ok := strings.CutPrefix(c.Ref, remote.TaskRefs); ok {
			t := state.ParseEntry(blobs[i], id)
			if t == nil {
				r.Violations = append(r.Violations, fmt.Sprintf("%s (%s): holds no entry of %s", short(c.Commit), c.Subject, id))
				continue
			}
			cur = append(cur, t)
		} else {
			s, err := state.Parse(blobs[i], remote.TasksFile)
			if blobs[i] == nil {
				err = fmt.Errorf("holds no %s", remote.TasksFile)
			}
			if err != nil {
				r.Violations = append(r.Violations, fmt.Sprintf("%s: %v", short(c.Commit), err))
				continue
			}
			for k := range s.Tasks {
				// A task whose ref had changed by then lives there.
				if first, ok := since[s.Tasks[k].ID]; !ok || c.Time.Before(first) {
					cur = append(cur, &s.Tasks[k])
				}
			}
		}
		for _, t := range cur {
			p := prev[t.ID]
			ev, bad := compare(p, t, c.Time)
			step.Events = append(step.Events, ev...)
			for _, b := range bad {
				r.Violations = append(r.Violations, fmt.Sprintf("%s (%s): %s", short(c.Commit), c.Subject, b))
			}
			if t.IntegratedCommit != "" && (p == nil || p.IntegratedCommit != t.IntegratedCommit) {
				if was, ok := integrated[t.ID]; ok && was != t.IntegratedCommit && p != nil && p.Status == state.Completed {
					r.Violations = append(r.Violations, fmt.Sprintf("%s (%s): %s integrated a second time (%s, then %s)", short(c.Commit), c.Subject, t.ID, short(was), short(t.IntegratedCommit)))
				}
				integrated[t.ID] = t.IntegratedCommit
			}
			prev[t.ID] = t
		}
		r.Steps = append(r.Steps, step)
	}
	if len(changes) > 0 {
		final, err := state.Composed(dir)
		if err != nil {
			r.Violations = append(r.Violations, fmt.Sprintf("the refs make no tasks file: %v", err))
		}
		r.Final = final
		for _, m := range machineNames(dir) {
			log, _ := remote.MachineFile(dir, m, remote.LogFile(m))
			r.Rejected[m] = strings.Count(string(log), "LOCK remote push of `")
		}
	}
	return r, nil
}

// machineNames lists the machines that published a log: on their own refs
// (remote.MachineRef), or in the state commit's tree on a job shared
// before those.
func machineNames(dir string) []string {
	var names []string
	for m := range remote.Published(dir) {
		names = append(names, m)
	}
	for _, f := range remote.Files(dir, remote.TrackedHead(dir)) {
		if m, ok := strings.CutPrefix(f, "harness-progress."); ok {
			if m = strings.TrimSuffix(m, ".txt"); !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
	}
	sort.Strings(names)
	return names
}

// compare tells what became of task p (nil when new) in t, changed at
// when, and which promise the change broke.
func compare(p, t *state.Task, when time.Time) (events, bad []string) {
	if p == nil {
		return []string{t.ID + " added"}, nil
	}
	newHolder := t.Status == state.InProgress && t.ClaimedBy != "" && (t.ClaimedBy != p.ClaimedBy || t.Generation != p.Generation)
	if newHolder {
		events = append(events, fmt.Sprintf("%s claimed by %s (generation %d)", t.ID, t.ClaimedBy, t.Generation))
		if t.Generation <= p.Generation {
			bad = append(bad, fmt.Sprintf("%s claimed by %s without a new generation (%d, was %d)", t.ID, t.ClaimedBy, t.Generation, p.Generation))
		}
		if held(p, when) {
			bad = append(bad, fmt.Sprintf("%s claimed by %s while %s held it (lease until %s)", t.ID, t.ClaimedBy, p.ClaimedBy, p.LeaseExpiresAt))
		}
	}
	if t.Status != p.Status && !newHolder {
		events = append(events, fmt.Sprintf("%s %s", t.ID, t.Status))
	}
	if t.ValidatedCommit != "" && t.ValidatedCommit != p.ValidatedCommit {
		events = append(events, fmt.Sprintf("%s queued (%s)", t.ID, short(t.ValidatedCommit)))
	}
	if t.IntegratedCommit != "" && t.IntegratedCommit != p.IntegratedCommit {
		events = append(events, fmt.Sprintf("%s integrated as %s", t.ID, short(t.IntegratedCommit)))
	}
	return events, bad
}

// held reports whether p was a live claim at when: in progress, with a
// holder whose lease had not run out.
func held(p *state.Task, when time.Time) bool {
	if p.Status != state.InProgress || p.ClaimedBy == "" || p.Validated() {
		return false
	}
	exp, err := time.Parse(time.RFC3339, p.LeaseExpiresAt)
	return err == nil && when.Before(exp)
}

// Machines lists the machines by name.
func (r *Report) Machines() []string {
	var ms []string
	for m := range r.Rejected {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	return ms
}

func short(h string) string { return h[:min(len(h), 7)] }

// Machine is one machine of a shared job as the remote shows it.
type Machine struct {
	Name string `json:"name"`
	// Clone is the id of the clone whose supervisor last published the
	// machine's board: one clone per name while it is live.
	Clone      string   `json:"clone,omitempty"`
	LastChange string   `json:"last_change,omitempty"` // when it last changed the state (RFC 3339)
	Claims     []string `json:"claims"`                // "<worker> <task> (lease until …)" / "(queued)"
	LastLine   string   `json:"last_log_line,omitempty"`
	// Its supervisor's board as last published (every 10 s while it runs):
	// "<worker> <state>, <n> sessions", and why it ended, once it has.
	Workers []string `json:"workers,omitempty"`
	Ended   string   `json:"ended,omitempty"`
}

// board is a supervisor's board as the state commit holds it
// (workers.RemoteBoard).
type board struct {
	Ended   string `json:"ended"`
	Clone   string `json:"clone"`
	Workers []struct {
		ID       string `json:"id"`
		State    string `json:"state"`
		Sessions int    `json:"sessions"`
	} `json:"workers"`
}

// Machines lists the machines of the job fetched into dir's repository:
// every one with a log on the remote, with the claims its workers hold in
// s (the state as the remote has it) and when it last changed the state.
func Machines(dir string, s *state.State) []Machine {
	changes, _ := remote.Changes(dir)
	if len(changes) == 0 {
		return nil
	}
	byName := map[string]*Machine{}
	var names []string
	get := func(name string) *Machine {
		if m, ok := byName[name]; ok {
			return m
		}
		byName[name] = &Machine{Name: name, Claims: []string{}}
		names = append(names, name)
		return byName[name]
	}
	for _, name := range machineNames(dir) {
		m := get(name)
		if log, ok := remote.MachineFile(dir, name, remote.LogFile(name)); ok {
			lines := strings.Split(strings.TrimRight(string(log), "\n"), "\n")
			m.LastLine = lines[len(lines)-1]
		}
	}
	for name, m := range byName {
		var b board
		if data, ok := remote.MachineFile(dir, name, remote.BoardFile(name)); ok && json.Unmarshal(data, &b) == nil {
			m.Ended, m.Clone = b.Ended, b.Clone
			for _, w := range b.Workers {
				m.Workers = append(m.Workers, fmt.Sprintf("%s %s, %d sessions", w.ID, w.State, w.Sessions))
			}
		}
	}
	for _, c := range changes {
		who, _, _ := strings.Cut(c.Subject, ":")
		name, _, _ := strings.Cut(who, "-")
		if m, ok := byName[name]; ok {
			m.LastChange = c.Time.Format(time.RFC3339)
		}
	}
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if t.Status != state.InProgress || t.ClaimedBy == "" {
			continue
		}
		name, _, _ := strings.Cut(t.ClaimedBy, "-")
		what := fmt.Sprintf("%s %s (lease until %s)", t.ClaimedBy, t.ID, t.LeaseExpiresAt)
		if t.Validated() {
			what = fmt.Sprintf("%s %s (validated, waiting to be integrated)", t.ClaimedBy, t.ID)
		}
		get(name).Claims = append(get(name).Claims, what)
	}
	sort.Strings(names)
	out := make([]Machine, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out
}
