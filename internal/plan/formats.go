package plan

import (
	"regexp"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// dependsLine finds "depends on #12", "blocked by #3, #4 and #5" in an
// issue's body.
// Compiled on first use: the harness command starts at every verb an
// agent runs, and most verbs read no plan.
var (
	dependsLine = sync.OnceValue(func() *regexp.Regexp {
		// Markdown emphasis may wrap the words: "- **Blocked by**: #155".
		return regexp.MustCompile(`(?i)\b(?:depends\s+on|blocked\s+by|dependencies\s*:)[*_]*\s*:?[*_]*\s*((?:(?:#\d+|https://github\.com/[\w.-]+/[\w.-]+/issues/\d+)(?:\s*,\s*|\s+and\s+|\s+)?)+)`)
	})
	// dependsHeading opens a section of a body whose list items are the
	// issues it waits on ("## Blocked by", "**Depends on:**").
	dependsHeading = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^\s*(?:#{1,6}\s*|[*_]{2})?\s*(?:depends\s+on|blocked\s+by|blockers|dependencies)\s*:?\s*(?:[*_]{2})?\s*:?\s*$`)
	})
	listLabel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*[*_]*[\pL][\pL\s-]*[*_]*\s*:(?:[^/]|$)`) })
	issueRef  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(https://github\.com/[\w.-]+/[\w.-]+/issues/)?#?(\d+)\b`)
	})
	// ownerRepo is a repository's name with its owner's ("cli/cli").
	ownerRepo   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\w.-]+/[\w.-]+$`) })
	priorityTag = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(?:priority\s*[:/=_ -]?\s*)?(p[0-4]|critical|urgent|high|medium|normal|low)(?:\s*[:/=_ -]?\s*priority)?$`)
	})
	bulletLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$`) })
	// A "*" right after the box is Kiro's mark of an optional task
	// ("- [ ]* 2.3 Write the unit tests"). The box holds any few
	// characters here; checkbox takes it when they are one mark or none.
	boxLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(\s*)(?:[-*+]|\d+[.)])\s+\[([^\[\]]{0,16})\](\*?)\s+(.*\S)\s*$`)
	})
	// dependsDetail is a detail line naming the items an item waits on by
	// their numbers, as Kiro-style plans write it: "_Depends: 1.1, 2.3_".
	dependsDetail = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^[*_]*depends(?:\s+on)?[*_]*\s*:[*_]*\s*(.*?)\s*[*_]*$`)
	})
	// detailLine is a labelled detail under an item, its label emphasised
	// as Kiro and cc-sdd write them: "_Requirements: 1.1_", "**Files**: …".
	detailLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[*_]{1,2}\pL[\pL\s-]*[*_]{0,2}\s*:`) })
	// dependsInline is the same said in an item's own text, as spec-kit
	// writes it: "T014 Implement the service (depends on T012, T013)", a
	// note in parentheses in it too ("(depends on T003 (the template))"),
	// "(depends only on T012)". "on" is a word: "(depends only …)" is not
	// "(depends on ly …)".
	dependsInline = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\(\s*depends\s+(?:only\s+)?on\b\s*:?\s*((?:[^()]|\([^()]*\))*?)\s*\)`)
	})
	// dependsSentence is the same said as a sentence of an item's text,
	// as spec-kit task lists in the wild end an item: "… in the same
	// file. Depends on: T006, T007." The colon makes it a list: "Depends
	// on the API" is prose.
	dependsSentence = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:^|\s)depends(?:\s+on)?\s*:\s*(.*?)[\s*_]*(?:\.\s|\.?$)`)
	})
	// listNumber is a word of a list of dependencies that is an item's
	// number, "T042:" with the colon its note begins with; or several
	// ("T005/T006"), or a range of them ("T002-T004", "T006–T007").
	listNumber = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^((?:\d+(?:\.\d+)*|T\d+[a-z]?)(?:(?:[-–/]|\.\.)(?:\d+(?:\.\d+)*|T\d+[a-z]?))*)\.?(:?)$`)
	})
	// rangeGap is a range of item numbers written with spaces around its
	// dash ("T001 – T008"), closed up to be read as one word.
	rangeGap = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(T\d+|\d+(?:\.\d+)*)\s+([-–])\s+(T\d+|\d+(?:\.\d+)*)\b`)
	})
	// optionalNumber is a sub-task's number marked optional after it
	// ("7.9* (P) …").
	optionalNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+(?:\.\d+)+)\*\s`) })
	// stampPrefix is the time an ExecPlan's Progress item leads with
	// ("- [x] (2025-11-25 15:08Z) Drafted the plan"): when the step was
	// done or written down, not the step.
	stampPrefix = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\(\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?Z?)?\)\s+`)
	})
	// itemNumber is the number an item's title begins with ("2.1 Create
	// the models", "3. Wire it up", spec-kit's "T004 [P] Contract test",
	// and "T004a", a task put in after T004 once the list was numbered).
	itemNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+(?:\.\d+)*|T\d+[a-z]?)\.?(?:\s|$)`) })
)

// listLines reads a text of criteria as a list: one a line, list markers
// and checkboxes taken off.
func listLines(s string) []string {
	var out []string
	for _, l := range lines([]byte(s)) {
		if c := checkbox(l); c != nil {
			l = c.text
		} else {
			l = strings.TrimSpace(l)
			for _, m := range []string{"- ", "* ", "+ "} {
				l = strings.TrimPrefix(l, m)
			}
		}
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// oneLine is a title on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func kindOf(v gjson.Result) string {
	switch {
	case !v.Exists():
		return "nothing"
	case v.IsArray():
		return "a list"
	case v.IsObject():
		return "an object"
	case v.Type == gjson.String:
		return "a string"
	case v.Type == gjson.Number:
		return "a number"
	case v.IsBool():
		return "a boolean"
	case v.Type == gjson.Null:
		return "null"
	}
	return "nothing"
}

func rawOr(v gjson.Result) string {
	if !v.Exists() {
		return "nothing"
	}
	return v.Raw
}
