package shellscan

import (
	"os"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Work limits. They bound the time one Analyze call can take on hostile or
// absurd input; commands an agent really writes stay far below them.
const (
	maxCommandBytes = 1 << 20 // larger commands are not parsed at all
	maxScriptDepth  = 8       // bash -c / eval / heredoc-to-shell nesting
	maxParenDepth   = 512     // the parser slows down quadratically beyond this
	maxASTDepth     = 2000    // recursion through compound commands
	maxNodes        = 100000  // statements, words and commands visited
	maxWrites       = 1024
	maxPrograms     = 1024
	maxMentions     = 4096
	maxMentionBytes = 1 << 20
	maxDirs         = 4 // candidate working directories tracked at once
	maxOpBytes      = 160
)

var parserPool = sync.Pool{New: func() any { return syntax.NewParser() }}

type analyzer struct {
	cwd  string
	home string

	src      string // source of the script being walked, for Op fragments
	depth    int    // nested scripts
	astDepth int
	nodes    int
	calls    []string // functions being expanded, against recursion

	incomplete bool
	parseErr   error

	writes   []Write
	wseen    map[Write]struct{}
	programs []Program
	pseen    map[string]struct{}
	mentions []string
	mseen    map[string]struct{}
	mbytes   int
}

func newAnalyzer(cwd string) *analyzer {
	return &analyzer{cwd: cwd, home: os.Getenv("HOME")}
}

func (a *analyzer) report() Report {
	return Report{
		ParseError: a.parseErr,
		Incomplete: a.incomplete,
		Writes:     a.writes,
		Programs:   a.programs,
		Mentions:   a.mentions,
	}
}

func (a *analyzer) run(command string) {
	st := &state{}
	if a.cwd != "" {
		st.dirs = []field{lit(a.cwd)}
	} else {
		st.dirs = []field{lit("")}
	}
	if len(command) > maxCommandBytes {
		a.fail(ErrTooLarge, command[:maxCommandBytes])
		return
	}
	a.script(command, st, syntax.LangBash, false)
}

// budget reports whether the work limit has been reached.
// visit counts one more node of the tree and reports whether the work
// budget is spent (the walk then stops there).
func (a *analyzer) visit() bool {
	a.nodes++
	return a.budget()
}

func (a *analyzer) budget() bool {
	if a.nodes > maxNodes {
		a.incomplete = true
		return true
	}
	return false
}

// fail records why (part of) the command could not be analysed and keeps its
// words as mentions, so a name check still sees them.
func (a *analyzer) fail(err error, src string) {
	a.incomplete = true
	if a.parseErr == nil {
		a.parseErr = err
	}
	for _, w := range strings.Fields(src) {
		a.mention(strings.Trim(w, `'"`))
	}
}

// script parses src and walks it in st. quiet is for strings that are only
// guessed to be shell code (inside python -c …): failing to parse them is
// not an error.
func (a *analyzer) script(src string, st *state, lang syntax.LangVariant, quiet bool) res {
	if a.depth >= maxScriptDepth {
		a.incomplete = true
		a.mention(src)
		return res{st, st}
	}
	a.nodes += len(src) / 64
	if a.budget() {
		return res{st, st}
	}
	if parenDepth(src) > maxParenDepth {
		if !quiet {
			a.fail(ErrTooNested, src)
		}
		return res{st, st}
	}
	f, err := parse(src, lang)
	if err != nil {
		if quiet {
			return res{st, st}
		}
		a.fail(err, src)
	}
	if f == nil {
		return res{st, st}
	}
	saved := a.src
	a.src = src
	a.depth++
	r := a.stmts(f.Stmts, st)
	a.depth--
	a.src = saved
	return r
}

// parse parses src as Bash; zsh code that Bash syntax rejects gets a second
// chance with the (experimental) zsh grammar.
func parse(src string, lang syntax.LangVariant) (*syntax.File, error) {
	p := parserPool.Get().(*syntax.Parser)
	defer parserPool.Put(p)
	syntax.Variant(syntax.LangBash)(p)
	f, err := p.Parse(strings.NewReader(src), "")
	if err != nil && lang == syntax.LangZsh {
		syntax.Variant(syntax.LangZsh)(p)
		if zf, zerr := p.Parse(strings.NewReader(src), ""); zerr == nil {
			f, err = zf, nil
		}
		syntax.Variant(syntax.LangBash)(p)
	}
	return f, err
}

// parenDepth is a cheap upper bound on how deeply src nests, ignoring
// quoting; it only guards the parser's speed, not the analysis.
func parenDepth(src string) int {
	d, maxD := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '`':
			d++
			if d > maxD {
				maxD = d
			}
		case ')', '}':
			if d > 0 {
				d--
			}
		}
	}
	return maxD
}

// srcOf returns the source text of a node of the script being walked.
func (a *analyzer) srcOf(n syntax.Node) string {
	from, to, ok := bounds(n)
	if !ok {
		return ""
	}
	return a.span(from, to)
}

// bounds is n.Pos() and n.End(), which index into child slices and so could
// panic on a node the parser left incomplete after a syntax error.
func bounds(n syntax.Node) (from, to syntax.Pos, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if n == nil {
		return from, to, false
	}
	return n.Pos(), n.End(), true
}

func (a *analyzer) span(from, to syntax.Pos) string {
	if !from.IsValid() || !to.IsValid() {
		return ""
	}
	s, e := int(from.Offset()), int(to.Offset())
	if s < 0 || e > len(a.src) || s > e {
		return ""
	}
	return a.src[s:e]
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxOpBytes {
		return s
	}
	cut := maxOpBytes
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

func (a *analyzer) mention(s string) {
	if s == "" {
		return
	}
	if len(a.mentions) >= maxMentions || a.mbytes+len(s) > maxMentionBytes {
		a.incomplete = true
		return
	}
	if addOnce(&a.mentions, &a.mseen, s) {
		a.mbytes += len(s)
	}
}

// addOnce appends v to *list unless it is there already, and reports
// whether it did. Most commands have a handful of words, so a short list is
// scanned; from 32 entries on, *seen indexes it.
func addOnce[T comparable](list *[]T, seen *map[T]struct{}, v T) bool {
	if *seen == nil {
		for _, x := range *list {
			if x == v {
				return false
			}
		}
		if len(*list) >= 32 {
			*seen = make(map[T]struct{}, 2*len(*list))
			for _, x := range *list {
				(*seen)[x] = struct{}{}
			}
		}
	}
	if *seen != nil {
		if _, ok := (*seen)[v]; ok {
			return false
		}
		(*seen)[v] = struct{}{}
	}
	*list = append(*list, v)
	return true
}

func (a *analyzer) addProgram(name field, args []field, dirs []field) {
	if len(a.programs) >= maxPrograms {
		a.incomplete = true
		return
	}
	if len(a.programs) < 32 {
		for _, p := range a.programs {
			if p.Name == name.text && sameArgs(p.Args, args) && sameDirs(p.Dirs, dirs) {
				return
			}
		}
	} else {
		if a.pseen == nil {
			a.pseen = make(map[string]struct{}, 2*len(a.programs))
			for _, p := range a.programs {
				a.pseen[programKey(p)] = struct{}{}
			}
		}
	}
	p := Program{Name: name.text, Dynamic: name.dyn}
	for _, d := range dirs {
		if d.dyn {
			p.Dirs = append(p.Dirs, "")
		} else {
			p.Dirs = append(p.Dirs, d.text)
		}
	}
	if len(args) > 0 {
		p.Args = make([]string, len(args))
		for i, f := range args {
			p.Args[i] = f.text
		}
	}
	if a.pseen != nil {
		k := programKey(p)
		if _, ok := a.pseen[k]; ok {
			return
		}
		a.pseen[k] = struct{}{}
	}
	a.programs = append(a.programs, p)
}

func sameArgs(have []string, args []field) bool {
	if len(have) != len(args) {
		return false
	}
	for i, f := range args {
		if have[i] != f.text {
			return false
		}
	}
	return true
}

func programKey(p Program) string {
	return p.Name + "\x00" + strings.Join(p.Args, "\x00") + "\x01" + strings.Join(p.Dirs, "\x00")
}

func sameDirs(have []string, dirs []field) bool {
	if len(have) != len(dirs) {
		return false
	}
	for i, d := range dirs {
		if d.dyn && have[i] != "" || !d.dyn && have[i] != d.text {
			return false
		}
	}
	return true
}

// write records that f (resolved against each candidate working directory)
// may be written.
func (a *analyzer) write(st *state, f field, kind WriteKind, op string, tree bool) {
	a.writeReach(st, f, kind, op, tree, ReachAll)
}

// writeReach is write for git commands that affect only some files.
func (a *analyzer) writeReach(st *state, f field, kind WriteKind, op string, tree bool, reach Reach) {
	if f.text == "" && f.pat == "" {
		return
	}
	for _, d := range st.dirs {
		p := joinPath(d, f)
		if !isPseudoDevice(p) {
			w := Write{Path: p.text, Kind: kind, Op: clip(op), Dynamic: p.dyn, Tree: tree, Reach: reach, fresh: p.fresh}
			if p.pat != p.text {
				w.pattern = p.pat
			}
			if p.raw != "" && strings.Contains(p.raw, "..") {
				w.Raw = p.raw
			}
			a.emit(w)
		}
		if f.isAbs() || f.floating() {
			break
		}
	}
}

func (a *analyzer) emit(w Write) {
	if len(a.writes) >= maxWrites {
		a.incomplete = true
		return
	}
	addOnce(&a.writes, &a.wseen, w)
}
