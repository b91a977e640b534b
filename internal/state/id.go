package state

import (
	"strconv"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
)

// MaxIDLength bounds a task id: it names refs, commits and log lines.
const MaxIDLength = 100

// idChars reports whether id is made of letters, digits, '.', '_' and '-'
// and starts with a letter or digit. (Written out rather than a regexp: a
// package-level regexp is compiled at every hook's start.)
func idChars(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return id != ""
}

// CheckID refuses a task id that could not be used everywhere the harness
// puts one verbatim: between brackets on a log line, in a commit message, as
// a word of a printed command, and as a component of the snapshot ref
// refs/harness/snapshots/<id>/<attempt> (so it obeys git check-ref-format).
// Ids already in a hand-edited file are not checked: the places that use
// them fold, quote or encode them instead.
func CheckID(id string) error {
	why := ""
	switch {
	case id == "":
		why = "it is empty"
	case len(id) > MaxIDLength:
		why = "it is longer than " + strconv.Itoa(MaxIDLength) + " characters"
	case !idChars(id):
		why = "only letters, digits, '.', '_' and '-' are allowed, starting with a letter or digit"
	case strings.Contains(id, ".."), strings.HasSuffix(id, "."), strings.HasSuffix(id, ".lock"):
		why = `git ref names cannot contain ".." or end with "." or ".lock"`
	}
	if why == "" {
		return nil
	}
	return failure.New(failure.Config, "invalid task id %s: %s", strconv.Quote(id), why).
		WithHint("pick an id like auth-login or task-042, or omit --id for the next task-NNN")
}

// Meant is the one task id a mistyped id most likely names: the same id in
// another case (TASK-001), else the one task whose id ends in the same
// number (task-1 or 1 for task-001, T3 for task-003); "" when none does, or
// several.
func (s *State) Meant(id string) string {
	for i := range s.Tasks {
		if strings.EqualFold(s.Tasks[i].ID, id) {
			return s.Tasks[i].ID
		}
	}
	n, ok := endNumber(id)
	if !ok {
		return ""
	}
	meant := ""
	for i := range s.Tasks {
		if m, ok := endNumber(s.Tasks[i].ID); ok && m == n && s.Tasks[i].ID != id {
			if meant != "" {
				return ""
			}
			meant = s.Tasks[i].ID
		}
	}
	return meant
}

// endNumber is the number id ends in, its leading zeros aside.
func endNumber(id string) (int, bool) {
	i := len(id)
	for i > 0 && '0' <= id[i-1] && id[i-1] <= '9' {
		i--
	}
	digits := strings.TrimLeft(id[i:], "0")
	if i == len(id) || len(digits) > 9 {
		return 0, false
	}
	n, _ := strconv.Atoi("0" + digits)
	return n, true
}

// IDHint is the hint for an id that names no task in s: the id it most
// likely meant, when one stands out.
func (s *State) IDHint(id string) string {
	if m := s.Meant(id); m != "" {
		return "did you mean " + m + "? (`harness status` lists the task ids)"
	}
	return "`harness status` lists the task ids"
}
