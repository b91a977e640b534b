package state

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/jsonobj"
)

// The task schema: one table of the members of a task object, in the order
// a new task is written. It drives reading (the members read without
// special code), comparing, copying and writing a task, and the rules a
// hand edit of the tasks file must keep (internal/guard). Adding a field is
// a line here plus what the harness does with it.

// fieldKind is how a member is read, compared, copied and written.
type fieldKind int

const (
	kindText     fieldKind = iota // a string, written as it is ("" as "")
	kindNullable                  // a string, "" written as null
	kindCount                     // a whole number ≥ 0
	kindList                      // a list of strings, nil written as []
	kindPaths                     // a list of strings, nil written as null (absent in a new task)
	kindTimeout                   // validation.timeout_seconds: 0 written as the default
	kindSteps                     // the checkpoints
	kindSwitch                    // a true/false written as a JSON boolean, "" (unset) as absent: the text ReviewOn/ReviewOff
)

// handEdit is what a hand edit of the tasks file may do to a member.
type handEdit int

const (
	editFree    handEdit = iota // anything (what the harness's verbs and the gates decide)
	editFrozen                  // nothing
	editGrow                    // only grow at the end (a log)
	editNoDecay                 // only go up (a count)
)

// taskField is one member of a task.
type taskField struct {
	name string // JSON member; "validation.command" for a nested one
	kind fieldKind
	// Exactly one accessor is set, by kind.
	text  func(*Task) *string
	count func(*Task) *int
	list  func(*Task) *[]string
	// def is a count's value when the member is absent.
	def int
	// special members are read by their own code in parser.task (status,
	// the nested objects, the checkpoints): they need more than a type
	// check.
	special bool
	// extension members are written into a new task only once set: they
	// are the harness's additions to the protocol's schema.
	extension bool
	// edit is what a hand edit may do; broken says so, for the guard.
	edit   handEdit
	broken func(id string, before, after *Task) string
}

var taskSchema = []taskField{
	{name: "id", kind: kindText, text: func(t *Task) *string { return &t.ID }},
	{name: "title", kind: kindText, text: func(t *Task) *string { return &t.Title },
		edit: editFrozen, broken: func(id string, _, _ *Task) string { return fmt.Sprintf("the title of %s may not change.", id) }},
	{name: "status", kind: kindText, text: func(t *Task) *string { return &t.Status }, special: true},
	{name: "priority", kind: kindText, text: func(t *Task) *string { return &t.Priority },
		edit: editFrozen, broken: func(id string, _, _ *Task) string {
			return fmt.Sprintf("the priority of %s may not change by hand (no harness verb changes it: ask the user).", id)
		}},
	{name: "depends_on", kind: kindList, list: func(t *Task) *[]string { return &t.DependsOn },
		edit: editFrozen, broken: func(id string, _, _ *Task) string { return fmt.Sprintf("depends_on of %s may not change.", id) }},
	{name: "attempts", kind: kindCount, count: func(t *Task) *int { return &t.Attempts },
		edit: editNoDecay, broken: func(id string, b, a *Task) string {
			return fmt.Sprintf("attempts of %s may not go down (%d → %d).", id, b.Attempts, a.Attempts)
		}},
	{name: "max_attempts", kind: kindCount, count: func(t *Task) *int { return &t.MaxAttempts }, def: DefaultMaxAttempts,
		edit: editFrozen, broken: func(id string, _, _ *Task) string { return fmt.Sprintf("max_attempts of %s may not change.", id) }},
	{name: "started_at_commit", kind: kindNullable, text: func(t *Task) *string { return &t.StartedAtCommit },
		edit: editFrozen, broken: claimBroken},
	{name: "validation.command", kind: kindNullable, text: func(t *Task) *string { return &t.Command }, special: true,
		edit: editFrozen, broken: validationBroken},
	{name: "validation.timeout_seconds", kind: kindTimeout, count: func(t *Task) *int { return &t.TimeoutSeconds }, special: true,
		edit: editFrozen, broken: validationBroken},
	{name: "on_failure.cleanup", kind: kindNullable, text: func(t *Task) *string { return &t.Cleanup }, special: true},
	{name: "error_log", kind: kindList, list: func(t *Task) *[]string { return &t.ErrorLog },
		edit: editGrow, broken: func(id string, _, _ *Task) string {
			return fmt.Sprintf("error_log of %s may only grow: its entries may not be shortened or rewritten (`harness fail %s --category C MSG` adds one).", id, id)
		}},
	{name: "checkpoints", kind: kindSteps, special: true,
		edit: editGrow, broken: func(id string, _, _ *Task) string {
			return fmt.Sprintf("checkpoints of %s may only grow: they may not be shortened or rewritten (`harness checkpoint %s M/N \"…\"` adds one).", id, id)
		}},
	{name: "completed_at", kind: kindNullable, text: func(t *Task) *string { return &t.CompletedAt }},
	{name: "failed_at", kind: kindNullable, text: func(t *Task) *string { return &t.FailedAt }, extension: true},
	{name: "claimed_by", kind: kindNullable, text: func(t *Task) *string { return &t.ClaimedBy }, extension: true,
		edit: editFrozen, broken: claimBroken},
	{name: "claimed_at", kind: kindNullable, text: func(t *Task) *string { return &t.ClaimedAt }, extension: true},
	{name: "lease_expires_at", kind: kindNullable, text: func(t *Task) *string { return &t.LeaseExpiresAt }, extension: true,
		edit: editFrozen, broken: claimBroken},
	{name: "allowed_paths", kind: kindPaths, list: func(t *Task) *[]string { return &t.AllowedPaths }, extension: true,
		edit: editFrozen, broken: func(id string, _, _ *Task) string {
			return fmt.Sprintf("allowed_paths of %s may not change: it is the task's scope lock (set with `harness add … --allowed-paths`; ask the user to widen it).", id)
		}},
	{name: "worktree", kind: kindNullable, text: func(t *Task) *string { return &t.Worktree }, extension: true},
	{name: "claimed_clone", kind: kindNullable, text: func(t *Task) *string { return &t.ClaimedClone }, extension: true,
		edit: editFrozen, broken: claimBroken},
	// What a plan brought in from another tool (harness import) or a person
	// gave (harness add --accept): where the task came from, what it is
	// about, and what a person will check besides the validation. They say
	// what done means, so no hand edit and no agent's verb changes them.
	{name: "source", kind: kindNullable, text: func(t *Task) *string { return &t.Source }, extension: true,
		edit: editFrozen, broken: func(id string, _, _ *Task) string {
			return fmt.Sprintf("the source of %s may not change (it ties the task to the plan it was imported from).", id)
		}},
	{name: "description", kind: kindNullable, text: func(t *Task) *string { return &t.Description }, extension: true,
		edit: editFrozen, broken: func(id string, _, _ *Task) string {
			return fmt.Sprintf("the description of %s may not change by hand (a person changes the plan: `harness import` again).", id)
		}},
	{name: "acceptance", kind: kindPaths, list: func(t *Task) *[]string { return &t.Acceptance }, extension: true,
		edit: editFrozen, broken: func(id string, _, _ *Task) string {
			return fmt.Sprintf("the acceptance criteria of %s may not change by hand: they say what done means (a person: `harness edit %s --accept …`).", id, id)
		}},
	{name: "claim_generation", kind: kindCount, count: func(t *Task) *int { return &t.Generation }, extension: true,
		edit: editFrozen, broken: claimBroken},
	{name: "validated_commit", kind: kindNullable, text: func(t *Task) *string { return &t.ValidatedCommit }, extension: true,
		edit: editFrozen, broken: mergeBroken},
	{name: "validated_at", kind: kindNullable, text: func(t *Task) *string { return &t.ValidatedAt }, extension: true,
		edit: editFrozen, broken: mergeBroken},
	{name: "integrated_commit", kind: kindNullable, text: func(t *Task) *string { return &t.IntegratedCommit }, extension: true,
		edit: editFrozen, broken: mergeBroken},
	{name: "review", kind: kindSwitch, text: func(t *Task) *string { return &t.Review }, extension: true,
		edit: editFrozen, broken: func(id string, _, _ *Task) string {
			return fmt.Sprintf("review of %s may not change by hand (the reviewer is a gate: a person sets it with `harness edit %s --review on|off`).", id, id)
		}},
}

func mergeBroken(id string, _, _ *Task) string {
	return fmt.Sprintf("validated_commit, validated_at and integrated_commit of %s may not change by hand: `harness validate` queues a task, the merge queue integrates it.", id)
}

func claimBroken(id string, _, _ *Task) string {
	return fmt.Sprintf("the claim of %s (claimed_by, lease_expires_at, started_at_commit) may not change by hand: `harness claim` takes it, `harness renew` extends the lease.", id)
}

func validationBroken(id string, _, _ *Task) string {
	return fmt.Sprintf("the validation of %s may not change (it is the objective check of the task).", id)
}

// plainFields lists the members parser.task reads through the schema (not
// special, not nested) by the length of their names: plainField finds a
// name by comparing it with the few of its length, faster than a map at
// some 200,000 members in a 10,000-task state. Built on first use, so a
// hook that reads no task does not pay for it at start, and handed out by
// pointer (by value, its 768 bytes were copied at every member read).
var plainFields = sync.OnceValue(func() *[32][]int {
	var by [32][]int
	for i, f := range taskSchema {
		if !f.special && !strings.Contains(f.name, ".") && len(f.name) < len(by) {
			by[len(f.name)] = append(by[len(f.name)], i)
		}
	}
	return &by
})

// plainField returns the schema index of the plain member key.
func plainField(key string) (int, bool) {
	by := plainFields()
	if len(key) >= len(by) {
		return 0, false
	}
	for _, i := range by[len(key)] {
		if taskSchema[i].name == key {
			return i, true
		}
	}
	return 0, false
}

// read sets the member from its JSON value, with the parser's type checks.
func (f *taskField) read(p *parser, t *Task, v gjson.Result) {
	switch f.kind {
	case kindText, kindNullable:
		*f.text(t) = p.strAt(v, f.name)
	case kindCount:
		*f.count(t) = p.intAt(v, f.name, f.def)
	case kindList, kindPaths:
		*f.list(t) = p.strings(v, f.name)
	case kindSwitch:
		*f.text(t) = p.switchAt(v, f.name)
	}
}

// value is the member as written to JSON.
func (f *taskField) value(t *Task) any {
	switch f.kind {
	case kindText:
		return *f.text(t)
	case kindNullable:
		return nullable(*f.text(t))
	case kindCount:
		return *f.count(t)
	case kindTimeout:
		return t.timeoutField()
	case kindList:
		return orEmpty(*f.list(t))
	case kindPaths:
		return *f.list(t)
	case kindSteps:
		return checkpointsOrEmpty(t.Checkpoints)
	case kindSwitch:
		switch *f.text(t) {
		case ReviewOn:
			return true
		case ReviewOff:
			return false
		}
	}
	return nil
}

// same reports whether the member is the same in a and b, as typed values
// (a nil list and an empty one differ only for the paths, which are
// written as null when nil).
func (f *taskField) same(a, b *Task) bool {
	switch f.kind {
	case kindText, kindNullable, kindSwitch:
		return *f.text(a) == *f.text(b)
	case kindCount, kindTimeout:
		return *f.count(a) == *f.count(b)
	case kindList:
		return slices.Equal(*f.list(a), *f.list(b))
	case kindPaths:
		x, y := *f.list(a), *f.list(b)
		return slices.Equal(x, y) && (x == nil) == (y == nil)
	case kindSteps:
		return slices.Equal(a.Checkpoints, b.Checkpoints)
	}
	return true
}

// unchanged reports whether two tasks are the same in every member.
func unchanged(a, b *Task) bool {
	for i := range taskSchema {
		if !taskSchema[i].same(a, b) {
			return false
		}
	}
	return true
}

// clone copies t, its lists included.
func (t Task) clone() Task {
	c := t
	for i := range taskSchema {
		if f := &taskSchema[i]; f.list != nil {
			*f.list(&c) = append([]string(nil), *f.list(&t)...)
		}
	}
	c.Checkpoints = append([]Checkpoint(nil), t.Checkpoints...)
	return c
}

// HandEditBreaks names the first rule of the schema a hand edit of task
// before into after breaks ("" when it keeps them all): the guard's check
// of an edit of the tasks file.
func HandEditBreaks(before, after *Task) string {
	for i := range taskSchema {
		f := &taskSchema[i]
		ok := true
		switch f.edit {
		case editFrozen:
			// A list whose nil-ness alone changed (null and [] for the
			// paths) is the same list to a hand edit.
			ok = f.same(before, after) || f.kind == kindPaths && slices.Equal(*f.list(before), *f.list(after))
		case editNoDecay:
			ok = *f.count(after) >= *f.count(before)
		case editGrow:
			if f.kind == kindSteps {
				ok = grows(before.Checkpoints, after.Checkpoints)
			} else {
				ok = grows(*f.list(before), *f.list(after))
			}
		}
		if !ok {
			return f.broken(before.ID, before, after)
		}
	}
	return ""
}

// grows reports whether cur is old with entries appended.
func grows[E comparable](old, cur []E) bool {
	return len(cur) >= len(old) && slices.Equal(old, cur[:len(old)])
}

// WriteTask writes every member of t through w as the tasks file holds it
// (the nested objects as objects), its values as they are in memory: ""
// as "", an unset timeout as 0, the harness's extensions always.
// ReadTask reads them back. The hooks' summary keeps the next task so
// (internal/statecache), without encoding/json's cost at a hook's start.
func WriteTask(w *jsonobj.Writer, t *Task) {
	for i := range taskSchema {
		f := &taskSchema[i]
		switch f.name {
		case "validation.command":
			w.Open("validation")
			w.Str("command", t.Command)
			w.Int("timeout_seconds", int64(t.TimeoutSeconds))
			w.Close()
			continue
		case "validation.timeout_seconds":
			continue
		case "on_failure.cleanup":
			w.Open("on_failure")
			w.Str("cleanup", t.Cleanup)
			w.Close()
			continue
		}
		switch f.kind {
		case kindText, kindNullable:
			w.Str(f.name, *f.text(t))
		case kindCount:
			w.Int(f.name, int64(*f.count(t)))
		case kindSwitch:
			if v := *f.text(t); v != "" {
				w.Bool(f.name, v == ReviewOn) // unset is absent, as in the tasks file
			}
		case kindList, kindPaths:
			w.Strs(f.name, *f.list(t))
		case kindSteps:
			w.Objects(f.name, len(t.Checkpoints), t.Checkpoints == nil, func(j int) {
				c := &t.Checkpoints[j]
				w.Int("step", int64(c.Step))
				w.Int("total", int64(c.Total))
				w.Str("description", c.Description)
				w.Str("timestamp", c.Timestamp)
			})
		}
	}
}

// ReadTask reads a task WriteTask wrote, with every check the parser makes
// of a task in the tasks file.
func ReadTask(v gjson.Result) (Task, error) {
	p := parser{path: FileName}
	t := p.task(v, 0)
	if p.err != nil {
		return Task{}, p.err
	}
	return t, nil
}
