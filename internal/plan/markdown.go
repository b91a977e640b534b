package plan

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/harness-agent/harness/internal/failure"
)

// box is one checklist line: "- [ ] text", "* [x] text", "1. [ ] text".
// Besides "[ ]" and "[x]", people and task-list plugins write other marks
// ("[/]", "[-]", "[~]", "[!]", "[>]", "[?]", "[🔄]") that mean started,
// cancelled, deferred, blocked, moved, in doubt, one thing in one file and
// another in the next ("[-]" is cancelled in Obsidian's Tasks, started in
// many roadmaps): every one of them is not done. A check ("[✅]", "[✓]",
// "[✔]") is done, and an empty box ("[]", "[  ]") is "[ ]".
type box struct {
	indent   int
	done     bool
	optional bool // Kiro's "- [ ]*": a task that may wait until after the rest
	mark     string
	text     string
}

// checkbox reads a checklist line, nil for any other.
func checkbox(line string) *box {
	m := boxLine().FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	mark := m[2]
	if strings.TrimFunc(mark, unicode.IsSpace) == "" {
		mark = " "
	} else if !oneMark(mark) || len(mark) == 1 && mark != "x" && mark != "X" && isAlnum(mark[0]) {
		// "[link text]", "[WIP]", a reference's "[1]", spec-kit's legend
		// "- [P] tasks = different files": a list item that begins with
		// brackets.
		return nil
	}
	// "✔️" and "✔︎" are "✔" drawn as an emoji or as text.
	plain := strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Variation_Selector, r) {
			return -1
		}
		return r
	}, mark)
	return &box{indent: len(strings.ReplaceAll(m[1], "\t", "    ")), done: doneMarks[plain], optional: m[3] == "*", mark: mark, text: m[4]}
}

// doneMarks are the marks of a done item: GitHub's "[x]", and the checks
// people put in its place.
var doneMarks = map[string]bool{"x": true, "X": true, "✅": true, "✓": true, "✔": true}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// oneMark reports whether a box holds one character as people see it: one
// rune, or an emoji written as several (a variation selector, a skin tone,
// a sequence joined by U+200D).
func oneMark(s string) bool {
	first := true
	joined := false
	for _, r := range s {
		switch {
		case first, joined:
			first, joined = false, false
		case r == '\u200d':
			joined = true
		case unicode.Is(unicode.Mn, r), unicode.Is(unicode.Me, r), unicode.Is(unicode.Variation_Selector, r),
			r >= 0x1f3fb && r <= 0x1f3ff: // a skin tone
		default:
			return false
		}
	}
	return !first && !joined
}

// parseMarkdown reads a checklist: every "- [ ] title" line is a task,
// "- [x]" a done one. An item nested under another is a task of its own,
// and the item above it waits on it (the outer item is done when its
// parts are); a plain list item nested under one is one of its acceptance
// criteria, and indented text under it after a blank line goes on with its
// description. An item's or a criterion's text goes on over the indented
// lines right under it, as a Markdown paragraph does.
// Kiro-style plans add two things: a detail line "_Depends: 1.1, 2.3_"
// (spec-kit's "(depends on T012, T013)" or "Depends on: T012." in the
// item's text) makes the item wait on the items numbered so, and "- [ ]*"
// marks an optional item, imported at P2 (after the rest at P1). Other lines are ignored. An item
// has no id, so its Source is the hash of its text.
func parseMarkdown(name string, data []byte) (*Plan, error) {
	p := &Plan{}
	type open struct{ indent, index int }
	var stack []open
	marks := map[string]int{}   // the marks of neither done nor empty boxes, and how many
	waits := map[int][]string{} // an item's "_Depends:" numbers, by its index
	optional := map[int]bool{}  // the items marked "- [ ]*", by index
	listed := 0                 // list items without a box
	quoted, quotedAt := 0, 0    // boxes in a block quote of their own, and the first one's line
	var said []string           // the dependencies in words, not taken
	fence := ""                 // the fence of the code block the line is in
	comment := false
	// take reads one line, and a list line's continuation lines (more)
	// with it. The first line alone says whether it is an item: "* []"
	// with text on the next line is not one, and the export ticks the
	// box on the first line.
	take := func(n int, line, more string) {
		c := checkbox(line)
		key := "" // what the item is known by: its first line's text
		if c != nil {
			// Known by its first line, as before wrapped lines were
			// read: a plan imported then finds its tasks again.
			key = c.text
			if more != "" {
				c.text += " " + more
			}
		}
		if c == nil {
			bullet := bulletLine().FindStringSubmatch(line)
			if bullet != nil {
				listed++
				if more != "" {
					bullet[1] += " " + more
				}
			}
			t := strings.TrimSpace(line)
			switch {
			case t == "":
			case !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t"):
				stack = stack[:0] // a heading or a paragraph ends the nesting
				if quotedBox(t) {
					if quoted++; quoted == 1 {
						quotedAt = n + 1
					}
				}
			default:
				// Under an item, a plain list item is one of its criteria
				// (as an export writes them), other text goes on with its
				// description.
				indent := indentOf(line)
				owner := -1 // under no item, or under one dropped
				for k := len(stack) - 1; k >= 0; k-- {
					if stack[k].indent < indent {
						owner = stack[k].index
						break
					}
				}
				if owner < 0 {
					break
				}
				detail := t
				if bullet != nil {
					detail = bullet[1]
				}
				if m := dependsDetail().FindStringSubmatch(detail); m != nil {
					refs, prose := itemNumbers(m[1])
					if refs != nil {
						waits[owner] = append(waits[owner], refs...)
						break
					}
					if prose {
						said = append(said, notNumbers(name, p.Items[owner].Title, m[1]))
					}
				}
				if bullet != nil {
					p.Items[owner].Acceptance = append(p.Items[owner].Acceptance, plainText(bullet[1]))
				} else {
					// A block quote's text is the description's, as an
					// export writes it (its blank lines ">" kept).
					if q, ok := strings.CutPrefix(t, ">"); ok {
						t = strings.TrimPrefix(q, " ")
					}
					if d := &p.Items[owner].Description; *d == "" {
						*d = t
					} else {
						*d += "\n" + t // trimmed at the end: a blank quoted line in it stays
					}
				}
			}
			return
		}
		title := plainText(c.text)
		// cc-sdd's own specs also mark an optional sub-task after its
		// number ("- [ ] 7.9* (P) Performance tests"): the same mark.
		if m := optionalNumber().FindStringSubmatchIndex(title); m != nil {
			c.optional = true
			title = title[:m[3]] + title[m[3]+1:]
		}
		if stamp := stampPrefix().FindString(title); stamp != "" && stamp != title {
			title = title[len(stamp):]
		}
		if !c.done && c.mark != " " {
			marks[c.mark]++
		}
		if placeholder(title) {
			p.Skipped = append(p.Skipped, Skipped{Source: fmt.Sprintf("%s:line %d", Markdown, n+1), Title: title,
				Why: "a placeholder, not a task"})
			return
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= c.indent {
			stack = stack[:len(stack)-1]
		}
		// An item struck through is one the plan dropped (cancelled,
		// deferred, out of scope: "- [ ] ~~Port to Windows~~ (deferred)"),
		// and so is every item under it, as a cancelled Taskmaster task's
		// subtasks are.
		under := len(stack) > 0 && stack[len(stack)-1].index < 0
		if struck(title) || under {
			why := "struck through: dropped from the plan"
			if under {
				why = "under an item struck through"
			}
			p.Skipped = append(p.Skipped, Skipped{Source: Markdown + ":" + shortHash(key), Title: title, Why: why})
			stack = append(stack, open{c.indent, -1})
			return
		}
		it := Item{Source: Markdown + ":" + shortHash(key), Title: title, Priority: "P1", Done: c.done,
			DependsOn: []string{}, line: n}
		if c.optional {
			it.Priority = "P2"
			optional[len(p.Items)] = true
		}
		lists := dependsInline().FindAllStringSubmatch(title, -1)
		lists = append(lists, dependsSentence().FindAllStringSubmatch(dependsInline().ReplaceAllString(title, ""), -1)...)
		for _, m := range lists {
			if refs, prose := itemNumbers(m[1]); refs != nil {
				waits[len(p.Items)] = append(waits[len(p.Items)], refs...)
			} else if prose {
				said = append(said, notNumbers(name, title, m[1]))
			}
		}
		p.Items = append(p.Items, it)
		// An optional part ("  - [ ]* 8.1") may be left for after the
		// rest: the item above it does not wait on it, as under the
		// numbering rule.
		if len(stack) > 0 && !c.optional {
			parent := stack[len(stack)-1].index
			p.Items[parent].DependsOn = append(p.Items[parent].DependsOn, "\x00"+strconv.Itoa(len(p.Items)-1))
		}
		stack = append(stack, open{c.indent, len(p.Items) - 1})
	}
	// A list line's text may wrap onto the lines under it: they are held
	// with it until its paragraph ends, as Markdown reads it, so that a
	// "(depends on T007, T008)" on the second line is read and a wrapped
	// criterion stays whole.
	held, heldAt, more := "", 0, ""
	flush := func() {
		if held != "" {
			take(heldAt, held, more)
			held, more = "", ""
		}
	}
	for n, line := range lines(data) {
		if held != "" && fence == "" && !comment && continues(line) {
			more = strings.TrimSpace(more + " " + strings.TrimSpace(line))
			continue
		}
		flush()
		// An HTML comment hides its lines (a template's example, an item
		// put aside).
		if t := strings.TrimSpace(line); fence == "" && (comment || strings.HasPrefix(t, "<!--")) {
			comment = !strings.Contains(t, "-->")
			continue
		}
		if f := fenceOf(line); fence == "" && f != "" {
			fence = f
			continue
		} else if fence != "" {
			if strings.HasPrefix(f, fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), fence[:1])) == "" {
				fence = "" // a closing fence: the same character, as long, nothing after it
			}
			continue
		}
		if checkbox(line) != nil || bulletLine().MatchString(line) {
			held, heldAt = line, n
			continue
		}
		take(n, line, "")
	}
	flush()
	for i := range p.Items {
		p.Items[i].Description = strings.TrimSpace(p.Items[i].Description)
	}
	if len(marks) > 0 {
		var said []string
		for _, m := range slices.Sorted(maps.Keys(marks)) {
			said = append(said, fmt.Sprintf("[%s] (%d)", m, marks[m]))
		}
		p.Notes = append(p.Notes, fmt.Sprintf("%s: the items marked %s are imported as not done (such a mark means started, cancelled or deferred, by the file's own convention)",
			name, strings.Join(said, ", ")))
	}
	if len(optional) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: %d item(s) marked optional (`- [ ]*`, `1.1*`) are imported at priority P2, after the rest, and the task they are part of does not wait on them", name, len(optional)))
	}
	// A box in a block quote is a note's or an example's (Obsidian's
	// callouts hold a quiz's options so, GitHub's alerts a reminder), not
	// the plan's: left, and said, so that none is lost unseen.
	inQuotes := fmt.Sprintf("%d checklist item(s) inside a block quote (`> - [ ] …`, the first at line %d)", quoted, quotedAt)
	if len(p.Items) == 0 && len(p.Skipped) == 0 {
		err := bad(name, "", "no checklist items (lines like `- [ ] title`)")
		if quoted > 0 {
			return nil, err.(*failure.Error).WithHint("%s has %s, which are not read as tasks: take the ones that are out of the quote, then import it again", name, inQuotes)
		}
		if listed > 0 {
			// A plan written as a plain list (a plan mode's numbered
			// steps): which of its items are tasks is the person's call.
			return nil, err.(*failure.Error).WithHint("%s has %d list item(s) without a box: write the ones that are tasks as `- [ ] …` (or `1. [ ] …`), then import it again", name, listed)
		}
		return nil, err
	}
	if quoted > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: %s are not imported: a quote holds a note or an example, not the plan's tasks; take the ones that are out of the quote to import them", name, inQuotes))
	}
	p.Notes = append(p.Notes, said...)
	p.Notes = append(p.Notes, numberedWaits(name, p.Items, waits, optional)...)
	uniqueSources(p.Items)
	// The parents' links were made by index: the Sources are final now.
	for i := range p.Items {
		for j, d := range p.Items[i].DependsOn {
			if k, ok := strings.CutPrefix(d, "\x00"); ok {
				idx, _ := strconv.Atoi(k)
				p.Items[i].DependsOn[j] = p.Items[idx].Source
				p.Items[i].parts = append(p.Items[i].parts, p.Items[idx].Source)
			} else if k, ok := strings.CutPrefix(d, "\x01"); ok {
				idx, _ := strconv.Atoi(k)
				p.Items[i].DependsOn[j] = p.Items[idx].Source
			}
		}
	}
	return p, nil
}

// quotedBox reports whether a line, trimmed, is a checklist item in a
// block quote, at any depth ("> - [ ] title", ">> * [x] title").
func quotedBox(t string) bool {
	if !strings.HasPrefix(t, ">") {
		return false
	}
	for strings.HasPrefix(t, ">") {
		t = strings.TrimLeft(t[1:], " ")
	}
	return checkbox(t) != nil
}

// continues reports whether a line goes on with the paragraph of the list
// line above it: text that is not a list item of its own, nor a detail
// line ("_Requirements: 1.1_", "**Depends on**: 2"), nor the start of a
// code block, a comment, a heading or a table, which Markdown reads as
// breaking the paragraph. A line wrapped at column 0 goes on with it too
// (CommonMark's "lazy" continuation: GitHub renders it in the item),
// unless it begins a block of its own. A block quote begins one at any
// indent: indented, it is the item's own (its description).
func continues(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" || strings.HasPrefix(t, ">") {
		return false
	}
	if !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") && startsBlock(t) {
		return false
	}
	// A table's row ("| spec | verdict |") is no title's: a table under an
	// item's first lines is its description, as GitHub renders it.
	if bulletLine().MatchString(line) || fenceOf(line) != "" || strings.HasPrefix(t, "<!--") || heading(t) || strings.HasPrefix(t, "|") {
		return false
	}
	return !detailLine().MatchString(t) && dependsDetail().FindStringSubmatch(t) == nil
}

// startsBlock reports whether an unindented line begins a block that ends
// a paragraph, beside those continues reads for any line: a block quote,
// an HTML block, a thematic break ("---", "* * *") or a setext heading's
// underline.
func startsBlock(t string) bool {
	if strings.HasPrefix(t, ">") {
		return true
	}
	if len(t) > 1 && t[0] == '<' && (t[1] == '/' || t[1] == '!' || t[1] == '?' || isASCIILetter(t[1])) {
		return true
	}
	rule := strings.NewReplacer(" ", "", "\t", "").Replace(t)
	return len(rule) > 0 && strings.Trim(rule, rule[:1]) == "" && strings.ContainsAny(rule[:1], "-*_=") &&
		(len(rule) >= 3 || rule[0] == '=' || rule[0] == '-')
}

func isASCIILetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// heading reports whether a line is an ATX heading ("## Phase 2"), not
// text that begins with an issue's "#12".
func heading(t string) bool {
	h := len(t) - len(strings.TrimLeft(t, "#"))
	return h >= 1 && h <= 6 && (len(t) == h || t[h] == ' ' || t[h] == '\t')
}

// indentOf is how far a line is indented, a tab as four spaces.
func indentOf(line string) int {
	l := strings.ReplaceAll(line, "\t", "    ")
	return len(l) - len(strings.TrimLeft(l, " "))
}

// itemNumbers reads the list of a "Depends:" line or a "(depends on …)"
// as item numbers: the ids that lead each of its parts, split at commas,
// semicolons and "and" outside parentheses, whatever note follows them
// ("1.1 (file scaffold), 2.1", "T042: auth fix", "T007 models"); a part
// after a semicolon with no id is a note on the list ("T003, T006;
// contracts/api.md"). It is nil when a part leads with no id ("the API",
// "T003, same file"), and prose says then whether the list said more than
// that there is none: that it is not taken is worth a warning.
func itemNumbers(s string) (refs []string, prose bool) {
	parts, seps := listParts(s)
	for i, part := range parts {
		ids := leadingNumbers(part)
		switch {
		case ids != nil:
			refs = append(refs, ids...)
			continue
		case strings.TrimSpace(part) == "":
			continue
		case seps[i] == ";" && refs != nil:
			return refs, false
		case i == 0 && noDependency(part):
			return nil, false
		}
		return nil, true
	}
	return refs, false
}

// listParts cuts a list at its commas, semicolons and "and"s, but not
// those inside parentheses (a part's note); seps[i] is what came before
// parts[i].
func listParts(s string) (parts, seps []string) {
	depth, start, sep := 0, 0, ""
	cut := func(end int, next string, skip int) {
		parts, seps = append(parts, s[start:end]), append(seps, sep)
		sep, start = next, end+skip
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth > 0:
		case c == ',' || c == ';':
			cut(i, string(c), 1)
		case c == ' ' && len(s) >= i+5 && strings.EqualFold(s[i:i+5], " and "):
			cut(i, "and", 5)
			i += 4
		}
	}
	cut(len(s), "", 0)
	return parts, seps
}

// leadingNumbers is the item numbers a part of a list begins with, up to
// the first word that is none or a number followed by a colon ("T042:").
// A range ("T002-T004", "T001 – T008") is one of them, written "T002-T004".
func leadingNumbers(part string) []string {
	part = rangeGap().ReplaceAllStringFunc(part, func(r string) string {
		m := rangeGap().FindStringSubmatch(r)
		if _, _, ok := numberRange(m[1] + "-" + m[3]); !ok {
			return r
		}
		return m[1] + "-" + m[3]
	})
	var ids []string
	for _, f := range strings.Fields(part) {
		m := listNumber().FindStringSubmatch(f)
		if m == nil {
			break
		}
		var refs []string
		for _, ref := range strings.Split(m[1], "/") {
			ref = strings.NewReplacer("–", "-", "..", "-").Replace(ref)
			if _, _, ok := numberRange(ref); strings.Contains(ref, "-") && !ok {
				return ids // "T003-2": no range of item numbers
			}
			refs = append(refs, ref)
		}
		ids = append(ids, refs...)
		if m[2] != "" {
			break
		}
	}
	return ids
}

// numberRange reads a range of item numbers, "T002-T004" or "2.1-2.4":
// its ends are of one kind (a spec-kit id, or a number with as many dots
// and the same ones before the last), the first not after the last.
func numberRange(ref string) (lo, hi []string, ok bool) {
	a, b, dash := strings.Cut(ref, "-")
	if !dash || strings.Contains(b, "-") || lettered(a) || lettered(b) {
		return nil, nil, false
	}
	lo, hi = numberParts(a), numberParts(b)
	if lo == nil || hi == nil || len(lo) != len(hi) || !slices.Equal(lo[:len(lo)-1], hi[:len(hi)-1]) {
		return nil, nil, false
	}
	x, _ := strconv.Atoi(lo[len(lo)-1])
	y, _ := strconv.Atoi(hi[len(hi)-1])
	return lo, hi, x <= y
}

// numberParts cuts an item number into what it is made of: "T012" is
// ["T", "12"], "2.1" is ["2", "1"]; nil for anything else. A task put in
// after T012 ("T012a") is T012's number, so a range holds it.
func numberParts(n string) []string {
	if d, ok := strings.CutPrefix(n, "T"); ok {
		if lettered(d) {
			d = d[:len(d)-1]
		}
		if _, err := strconv.Atoi(d); err != nil {
			return nil
		}
		return []string{"T", d}
	}
	parts := strings.Split(n, ".")
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			return nil
		}
	}
	return parts
}

// lettered reports whether an item number ends with a letter ("T004a").
func lettered(n string) bool {
	return n != "" && n[len(n)-1] >= 'a' && n[len(n)-1] <= 'z'
}

// inRange reports whether the item number n is one of the range lo-hi.
func inRange(lo, hi []string, n string) bool {
	parts := numberParts(n)
	if len(parts) != len(lo) || !slices.Equal(parts[:len(parts)-1], lo[:len(lo)-1]) {
		return false
	}
	x, _ := strconv.Atoi(parts[len(parts)-1])
	a, _ := strconv.Atoi(lo[len(lo)-1])
	b, _ := strconv.Atoi(hi[len(hi)-1])
	return a <= x && x <= b
}

// noDependency reports whether a list says there is none ("none
// (independent of 1.1)", "n/a").
func noDependency(part string) bool {
	f := strings.Fields(part)
	if len(f) == 0 {
		return true
	}
	switch strings.ToLower(strings.Trim(f[0], ".,:;()")) {
	case "none", "nothing", "n/a", "na", "-", "—", "–":
		return true
	}
	return false
}

// notNumbers is the warning for a list of dependencies in words, which
// stays as it is written, in the title or a criterion.
func notNumbers(name, title, list string) string {
	return fmt.Sprintf("%s: %q depends on %q, whose parts do not each begin with an item number: kept as written, not taken as a dependency", name, title, list)
}

// numberedWaits adds to each item of waits the items its "_Depends:" line
// numbers (an item's number is the one its title begins with), and to an
// item numbered "2." its sub-tasks "2.1", "2.2", … as its parts (the major
// task is done when they are, as with an item nested under another),
// but for an optional one and one that waits on it itself. A number two
// items begin with (a list that starts again at each heading) names
// neither. The links are by index until the Sources are final; the notes
// say which numbers name no item.
func numberedWaits(name string, items []Item, waits map[int][]string, optional map[int]bool) (notes []string) {
	const twice = -1
	numbered := map[string]int{}
	number := make([]string, len(items))
	for i, it := range items {
		if m := itemNumber().FindStringSubmatch(it.Title); m != nil {
			number[i] = m[1]
			if _, seen := numbered[m[1]]; seen {
				numbered[m[1]] = twice
			} else {
				numbered[m[1]] = i
			}
		}
	}
	link := func(i, k int, prefix string) {
		for _, d := range items[i].DependsOn {
			if d == "\x00"+strconv.Itoa(k) || d == "\x01"+strconv.Itoa(k) {
				return
			}
		}
		items[i].DependsOn = append(items[i].DependsOn, prefix+strconv.Itoa(k))
	}
	for _, i := range slices.Sorted(maps.Keys(waits)) {
		for _, ref := range waits[i] {
			if lo, hi, ok := numberRange(ref); ok {
				// A range names the items numbered within it: a number
				// it skips (T015a, a task removed) is no item's.
				found := false
				for k, n := range number {
					if n == "" || !inRange(lo, hi, n) {
						continue
					}
					found = true
					if numbered[n] == twice {
						notes = append(notes, fmt.Sprintf("%s: %q depends on %s, which more than one item of the file is numbered: not taken as a dependency", name, items[i].Title, n))
					} else if k != i {
						link(i, k, "\x01")
					}
				}
				if !found {
					notes = append(notes, fmt.Sprintf("%s: %q depends on %s, in which no item of the file is numbered: not taken as a dependency", name, items[i].Title, ref))
				}
				continue
			}
			k, ok := numbered[strings.TrimSuffix(ref, ".")]
			switch {
			case !ok:
				notes = append(notes, fmt.Sprintf("%s: %q depends on %s, which no item of the file is numbered: not taken as a dependency", name, items[i].Title, ref))
			case k == twice:
				notes = append(notes, fmt.Sprintf("%s: %q depends on %s, which more than one item of the file is numbered: not taken as a dependency", name, items[i].Title, ref))
			case k != i:
				link(i, k, "\x01")
			}
		}
	}
	for k, n := range number {
		major, _, sub := strings.Cut(n, ".")
		if !sub || strings.Contains(n[len(major)+1:], ".") || optional[k] || numbered[n] == twice {
			continue
		}
		i, ok := numbered[major]
		if !ok || i == twice || !strings.HasPrefix(items[i].Title, major+".") ||
			slices.Contains(waits[k], major) || slices.Contains(waits[k], major+".") {
			continue
		}
		link(i, k, "\x00")
	}
	return notes
}

// fenceOf is the fence a line opens or closes a code block with ("```",
// "~~~~"), "" for any other line.
func fenceOf(line string) string {
	t := strings.TrimSpace(line)
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(t, c+c+c) {
			return t[:len(t)-len(strings.TrimLeft(t, c))]
		}
	}
	return ""
}

// plainText takes Markdown's emphasis off a title: "**Auth**: login" is
// "Auth: login", and a text emphasised whole ("_Requirements: 2.1_", as
// Kiro writes a task's detail) is the text. Code spans keep theirs
// ("`__init__`"), and the text around them loses its own.
func plainText(s string) string {
	spans := codeSpans(s)
	for _, m := range []string{"**", "__"} {
		n := 0
		for i := 0; i < len(spans); i += 2 {
			n += strings.Count(spans[i], m)
		}
		if n >= 2 {
			for i := 0; i < len(spans); i += 2 {
				spans[i] = strings.ReplaceAll(spans[i], m, "")
			}
		}
	}
	s = strings.Join(spans, "")
	s = strings.TrimSpace(s)
	for _, m := range []string{"_", "*"} {
		if len(s) > 2 && strings.HasPrefix(s, m) && strings.HasSuffix(s, m) && strings.Count(s, m) == 2 {
			s = strings.TrimSpace(s[1 : len(s)-1])
		}
	}
	return s
}

// codeSpans cuts s into text and code spans, the code spans ("`a`", or a
// span opened and closed by two backticks around text holding one) at the
// odd indexes. A run of backticks no run as long closes is text, as
// Markdown reads it.
func codeSpans(s string) []string {
	var out []string
	text := 0 // where the text not yet cut starts
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		run := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
		end := closingRun(s[i+run:], run)
		if end < 0 {
			i += run
			continue
		}
		out = append(out, s[text:i], s[i:i+run+end+run])
		i += run + end + run
		text = i
	}
	return append(out, s[text:])
}

// closingRun is where in s a run of exactly n backticks starts, -1 if none.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		run := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
		if run == n {
			return i
		}
		i += run
	}
	return -1
}

// struck reports whether a title's name is struck through ("~~Port to
// Windows~~ (deferred)", spec-kit's "T009 ~~Export the types~~"), not a
// word of it ("Support ~~XML~~ JSON").
func struck(title string) bool {
	if m := itemNumber().FindStringIndex(title); m != nil {
		title = title[m[1]:]
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(title), "~~")
	return ok && strings.Index(rest, "~~") > 0
}

// placeholder reports whether a checklist item's text holds no work of
// its own ("TBD", "TODO", "..."): a list of them is not a list of tasks.
func placeholder(s string) bool {
	switch strings.ToLower(strings.Trim(s, " .:!?…-*_()[]")) {
	case "", "tbd", "tba", "todo", "to do", "wip", "n/a", "na", "tk", "xxx", "fixme", "placeholder", "to be determined", "to be defined":
		return true
	}
	return false
}
