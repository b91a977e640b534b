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
