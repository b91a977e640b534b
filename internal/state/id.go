package state

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
)

// MaxIDLength bounds a task id: it names refs, commits and log lines.
const MaxIDLength = 100

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

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
	case !idPattern.MatchString(id):
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
