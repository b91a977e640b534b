package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/schedule"
	"github.com/harness-agent/harness/internal/state"
)

// selection is the tasks a verb over many tasks works on: the ids and
// ranges given (every task when none is), kept by every --where.
type selection struct {
	words  []string // the ids and ranges as given
	wheres []string // the --where conditions as given
	match  []func(*state.Task) bool
}

// whereKeys are the conditions of --where, for the usage and its errors.
const whereKeys = "status=STATUS, source=PATTERN, priority=P0|P1|P2 or no-validation"

// newSelection reads ids and ranges (task-010..task-040) and --where
// conditions; an unknown condition is refused here, before any file is read.
func newSelection(words, wheres []string) (*selection, error) {
	sel := &selection{words: words, wheres: wheres}
	for _, w := range wheres {
		key, value, _ := strings.Cut(w, "=")
		switch key {
		case "no-validation":
			if value != "" {
				return nil, fmt.Errorf("--where no-validation takes no value")
			}
			// A completed task is left out: its work was accepted; a
			// person gives it a check by its id.
			sel.match = append(sel.match, schedule.Unchecked)
		case "status":
			switch value {
			case state.Pending, state.InProgress, state.Completed, state.Failed:
			default:
				return nil, fmt.Errorf("--where status= takes pending, in_progress, completed or failed, got %q", value)
			}
			sel.match = append(sel.match, func(t *state.Task) bool { return t.Status == value })
		case "priority":
			p, ok := priorityOf(value)
			if !ok {
				return nil, fmt.Errorf("--where priority= takes P0, P1 or P2, got %q", value)
			}
			value = p
			sel.match = append(sel.match, func(t *state.Task) bool { return t.Priority == value })
		case "source":
			if value == "" {
				return nil, fmt.Errorf("--where source= needs a PATTERN (* matches any text: taskmaster:master/*)")
			}
			sel.match = append(sel.match, func(t *state.Task) bool { return t.Source != "" && globMatch(value, t.Source) })
		default:
			return nil, fmt.Errorf("unknown --where %q: it takes %s", w, whereKeys)
		}
	}
	for _, w := range words {
		if lo, hi, ok := strings.Cut(w, ".."); ok {
			if _, _, _, err := parseRange(lo, hi); err != nil {
				return nil, err
			}
		}
	}
	return sel, nil
}

// many reports whether the selection may name more than one task.
func (sel *selection) many() bool {
	return len(sel.wheres) > 0 || len(sel.words) != 1 || strings.Contains(sel.words[0], "..")
}

// String is the selection as the person gave it, for a log line.
func (sel *selection) String() string {
	var parts []string
	for _, w := range sel.words {
		parts = append(parts, failure.ShellArg(w))
	}
	for _, w := range sel.wheres {
		parts = append(parts, "--where "+failure.ShellArg(w))
	}
	return strings.Join(parts, " ")
}

// tasks returns the selected tasks of s in the file's order. An id named
// that is no task is an error; a range takes the tasks there are in it.
func (sel *selection) tasks(s *state.State) ([]*state.Task, error) {
	in := func(*state.Task) bool { return true }
	if len(sel.words) > 0 {
		ids := map[string]bool{}
		var ranges []func(string) bool
		for _, w := range sel.words {
			if lo, hi, ok := strings.Cut(w, ".."); ok {
				prefix, a, b, _ := parseRange(lo, hi)
				ranges = append(ranges, func(id string) bool {
					n, ok := idNumber(id, prefix)
					return ok && n >= a && n <= b
				})
				continue
			}
			ids[w] = true
		}
		for id := range ids {
			if s.Index(id) < 0 {
				return nil, noTask(s, id)
			}
		}
		in = func(t *state.Task) bool {
			if ids[t.ID] {
				return true
			}
			for _, r := range ranges {
				if r(t.ID) {
					return true
				}
			}
			return false
		}
	}
	var out []*state.Task
next:
	for i := range s.Tasks {
		t := &s.Tasks[i]
		if !in(t) {
			continue
		}
		for _, m := range sel.match {
			if !m(t) {
				continue next
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// parseRange reads the ends of a range lo..hi: ids of one prefix ending in
// a number (task-010..task-040), lo at most hi.
func parseRange(lo, hi string) (prefix string, a, b int, err error) {
	bad := func(why string) (string, int, int, error) {
		return "", 0, 0, fmt.Errorf("range %s..%s: %s (a range is task-010..task-040)", lo, hi, why)
	}
	prefix = strings.TrimRight(lo, "0123456789")
	if prefix == lo || !strings.HasPrefix(hi, prefix) {
		return bad("its ends must be ids of one prefix ending in a number")
	}
	var okA, okB bool
	a, okA = idNumber(lo, prefix)
	b, okB = idNumber(hi, prefix)
	if !okA || !okB {
		return bad("its ends must be ids of one prefix ending in a number")
	}
	if a > b {
		return bad("its first end is after its last")
	}
	return prefix, a, b, nil
}

// idNumber is the number of id after prefix, when the rest is digits.
func idNumber(id, prefix string) (int, bool) {
	digits, ok := strings.CutPrefix(id, prefix)
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// globMatch reports whether s matches pattern, where * matches any text
// (slashes too: a source is taskmaster:TAG/ID) and the rest is literal.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return s == pattern
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}
