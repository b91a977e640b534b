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

// state is what the shell remembers between statements that matters here.
// Branches get clones; where control flow joins, states are merged so every
// directory a later relative path might be resolved against is kept.
type state struct {
	dirs []field           // candidate working directories
	vars map[string]string // variables with a known literal value
	// shapes are variables whose value is not known but whose form is
	// ("$(mktemp)": a fresh name in a temporary directory).
	shapes map[string]field
	funcs  map[string]*syntax.Stmt
	stack  [][]field // pushd stack
	// shared maps belong to another state too and must be copied before
	// they are changed.
	shared bool
}

// res is the state after a command when it succeeded (ok) and whatever its
// outcome (any); they differ after a cd, which matters for "cd x && …".
type res struct{ ok, any *state }

func (s *state) clone() *state {
	c := *s
	c.dirs = append([]field(nil), s.dirs...)
	c.stack = append([][]field(nil), s.stack...)
	c.shared, s.shared = true, true
	return &c
}

func (s *state) own() {
	if !s.shared {
		return
	}
	vars := make(map[string]string, len(s.vars))
	for k, v := range s.vars {
		vars[k] = v
	}
	funcs := make(map[string]*syntax.Stmt, len(s.funcs))
	for k, v := range s.funcs {
		funcs[k] = v
	}
	var shapes map[string]field
	if len(s.shapes) > 0 {
		shapes = make(map[string]field, len(s.shapes))
		for k, v := range s.shapes {
			shapes[k] = v
		}
	}
	s.vars, s.funcs, s.shapes, s.shared = vars, funcs, shapes, false
}

func (s *state) setVar(name, v string) {
	s.own()
	if s.vars == nil {
		s.vars = make(map[string]string)
	}
	s.vars[name] = v
	delete(s.shapes, name)
}

// setShape records that name holds a value of the form f (a dynamic field).
func (s *state) setShape(name string, f field) {
	s.forget(name)
	s.own()
	if s.shapes == nil {
		s.shapes = make(map[string]field)
	}
	f.feed, f.raw = nil, ""
	s.shapes[name] = f
}

func (s *state) shape(name string) (field, bool) {
	f, ok := s.shapes[name]
	return f, ok
}

func (s *state) forget(name string) {
	if _, ok := s.shapes[name]; ok {
		s.own()
		delete(s.shapes, name)
	}
	if v, ok := s.vars[name]; ok && v == unknownVar {
		return
	}
	s.own()
	if s.vars == nil {
		s.vars = make(map[string]string)
	}
	// An explicit unknown marker overrides the defaults of $HOME, $PWD and
	// $IFS, and tells a variable set to something unknown from one never
	// set (which a program would take from the environment).
	s.vars[name] = unknownVar
}

// hasDefault names the variables this package assumes a value for when the
// command has not set them: forgetting one must be explicit.
func hasDefault(name string) bool { return name == "HOME" || name == "PWD" || name == "IFS" }

// defaultIFS is what Bash splits unquoted expansions on unless told otherwise
// (it does not take IFS from the environment).
const defaultIFS = " \t\n"

// ifs returns the separators unquoted expansions are split on, or false
// when the command changed them in a way not known statically.
func (s *state) ifs() (string, bool) {
	v, ok := s.vars["IFS"]
	switch {
	case !ok:
		return defaultIFS, true
	case v == unknownVar:
		return "", false
	}
	return v, true
}

// unknownVar marks a variable whose value cannot be known; it is not a
// value any real assignment can produce.
const unknownVar = "\x00unknown"

func (s *state) forgetAll() {
	s.own()
	s.vars = map[string]string{"HOME": unknownVar, "PWD": unknownVar, "IFS": unknownVar}
	s.shapes = nil
}

func (s *state) lookup(a *analyzer, name string) (string, bool) {
	if v, ok := s.vars[name]; ok {
		return v, v != unknownVar
	}
	switch name {
	case "HOME":
		return a.home, a.home != ""
	case "PWD":
		return s.pwd()
	}
	return "", false
}

func (s *state) pwd() (string, bool) {
	if v, ok := s.vars["PWD"]; ok && v == unknownVar {
		return "", false
	}
	if len(s.dirs) == 1 && !s.dirs[0].dyn && s.dirs[0].text != "" {
		return s.dirs[0].text, true
	}
	return "", false
}

func (s *state) setFunc(name string, body *syntax.Stmt) {
	s.own()
	if s.funcs == nil {
		s.funcs = make(map[string]*syntax.Stmt)
	}
	s.funcs[name] = body
}

// merge joins two possible states: directories are united, variables are
// kept only where both agree.
func merge(x, y *state) *state {
	if x == y {
		return x
	}
	m := &state{}
	m.dirs = append(append([]field(nil), x.dirs...), y.dirs...)
	m.dirs = dedupeDirs(m.dirs)
	for k, v := range x.vars {
		if w, ok := y.vars[k]; ok && w == v {
			if m.vars == nil {
				m.vars = make(map[string]string)
			}
			m.vars[k] = v
		} else if hasDefault(k) {
			if m.vars == nil {
				m.vars = make(map[string]string)
			}
			m.vars[k] = unknownVar
		}
	}
	for k := range y.vars {
		if _, ok := x.vars[k]; !ok && hasDefault(k) {
			if m.vars == nil {
				m.vars = make(map[string]string)
			}
			m.vars[k] = unknownVar
		}
	}
	for k, v := range x.shapes {
		if w, ok := y.shapes[k]; ok && w == v {
			if m.shapes == nil {
				m.shapes = make(map[string]field)
			}
			m.shapes[k] = v
		}
	}
	if len(x.funcs)+len(y.funcs) > 0 {
		m.funcs = make(map[string]*syntax.Stmt, len(x.funcs)+len(y.funcs))
		for k, v := range x.funcs {
			m.funcs[k] = v
		}
		for k, v := range y.funcs {
			m.funcs[k] = v
		}
	}
	m.stack = x.stack
	return m
}

func dedupeDirs(ds []field) []field {
	out := ds[:0]
	for _, d := range ds {
		dup := false
		for _, o := range out {
			if o == d {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, d)
		}
	}
	if len(out) > maxDirs {
		return []field{unknownDir}
	}
	return out
}

func (a *analyzer) stmts(list []*syntax.Stmt, st *state) res {
	r := res{st, st}
	for _, s := range list {
		if a.budget() {
			break
		}
		r = a.stmt(s, r.any, nil)
	}
	return r
}

func (a *analyzer) stmt(s *syntax.Stmt, st *state, stdin *string) res {
	if s == nil {
		return res{st, st}
	}
	a.nodes++
	a.astDepth++
	defer func() { a.astDepth-- }()
	if a.astDepth > maxASTDepth {
		a.incomplete = true
		if a.parseErr == nil {
			a.parseErr = ErrTooNested
		}
		return res{st, st}
	}
	for _, rd := range s.Redirs {
		stdin = a.redirect(rd, st, s, stdin)
	}
	if s.Background || s.Coprocess || s.Disown {
		// Runs in a subshell: nothing it changes is seen afterwards.
		a.command(s.Cmd, st.clone(), stdin, s)
		return res{st, st}
	}
	r := a.command(s.Cmd, st, stdin, s)
	if s.Negated {
		r.ok = r.any
	}
	return r
}

func (a *analyzer) redirect(rd *syntax.Redirect, st *state, s *syntax.Stmt, stdin *string) *string {
	if rd == nil {
		return stdin
	}
	a.substs(st, rd.Word)
	a.substs(st, rd.Hdoc)
	var kind WriteKind
	switch rd.Op {
	case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob, syntax.RdrInOut:
		kind = Redirect
	case syntax.AppOut, syntax.AppClob, syntax.AppAll, syntax.AppAllClob:
		kind = Append
	case syntax.DplOut:
		if w := rd.Word; w != nil {
			if l := w.Lit(); l != "" && isFdWord(l) {
				return stdin
			}
		}
		kind = Redirect
	case syntax.Hdoc, syntax.DashHdoc:
		body := a.field(st, rd.Hdoc).text
		a.mention(body)
		return &body
	case syntax.WordHdoc:
		body := a.field(st, rd.Word).text
		a.mention(body)
		body += "\n"
		return &body
	case syntax.RdrIn, syntax.DplIn:
		return nil
	default:
		return stdin
	}
	var op string
	if _, end, ok := bounds(rd); ok {
		op = a.span(s.Pos(), end)
	}
	if op == "" || len(op) > maxOpBytes {
		op = a.srcOf(rd)
	}
	for _, f := range a.fields(st, rd.Word, true) {
		a.mention(f.text)
		a.write(st, f, kind, op, false)
	}
	return stdin
}

// isFdWord reports whether the word after >& names a file descriptor (or
// closes one) rather than a file.
func isFdWord(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (a *analyzer) command(cmd syntax.Command, st *state, stdin *string, s *syntax.Stmt) res {
	switch c := cmd.(type) {
	case nil:
		return res{st, st}
	case *syntax.CallExpr:
		return a.call(c, st, stdin)
	case *syntax.BinaryCmd:
		return a.binary(c, st, stdin)
	case *syntax.Subshell:
		a.stmts(c.Stmts, st.clone())
		return res{st, st}
	case *syntax.Block:
		return a.stmts(c.Stmts, st)
	case *syntax.IfClause:
		return a.ifClause(c, st)
	case *syntax.WhileClause:
		cond := a.stmts(c.Cond, st.clone())
		body := a.stmts(c.Do, cond.ok.clone())
		m := merge(st, merge(cond.any, body.any))
		return res{m, m}
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			var items []field
			for _, w := range l.Items {
				a.substs(st, w)
				for _, f := range a.fields(st, w, true) {
					a.mention(f.text)
					items = append(items, f)
				}
			}
			if l.Name != nil {
				if len(items) == 1 && !items[0].dyn {
					st.setVar(l.Name.Value, items[0].text)
				} else {
					st.forget(l.Name.Value)
				}
			}
		case *syntax.CStyleLoop:
			a.arith(st, l.Init)
			a.arith(st, l.Cond)
			a.arith(st, l.Post)
		}
		body := a.stmts(c.Do, st.clone())
		m := merge(st, body.any)
		return res{m, m}
	case *syntax.CaseClause:
		a.substs(st, c.Word)
		m := st
		for _, it := range c.Items {
			if it == nil {
				continue
			}
			for _, p := range it.Patterns {
				a.substs(st, p)
			}
			r := a.stmts(it.Stmts, st.clone())
			m = merge(m, r.any)
		}
		return res{m, m}
	case *syntax.FuncDecl:
		var names []string
		if c.Name != nil {
			names = append(names, c.Name.Value)
		}
		for _, n := range c.Names {
			if n != nil {
				names = append(names, n.Value)
			}
		}
		for _, n := range names {
			st.setFunc(n, c.Body)
		}
		// Also analyse the body where it is defined, in case it is called
		// in ways not followed here (trap, a dynamic name, …).
		a.calls = append(a.calls, names...)
		a.stmt(c.Body, st.clone(), nil)
		a.calls = a.calls[:len(a.calls)-len(names)]
		return res{st, st}
	case *syntax.ArithmCmd:
		a.arith(st, c.X)
		return res{st, st}
	case *syntax.TestClause:
		a.test(st, c.X)
		return res{st, st}
	case *syntax.DeclClause:
		a.decl(c, st)
		return res{st, st}
	case *syntax.LetClause:
		for _, e := range c.Exprs {
			a.arith(st, e)
		}
		return res{st, st}
	case *syntax.TimeClause:
		return a.stmt(c.Stmt, st, stdin)
	case *syntax.CoprocClause:
		a.stmt(c.Stmt, st.clone(), nil)
		return res{st, st}
	case *syntax.TestDecl:
		a.stmt(c.Body, st.clone(), nil)
		return res{st, st}
	}
	return res{st, st}
}

// binary handles && and || lists and pipelines. Long chains parse as deep
// left-leaning trees; they are flattened so walking them needs no recursion.
func (a *analyzer) binary(c *syntax.BinaryCmd, st *state, stdin *string) res {
	pipe := c.Op == syntax.Pipe || c.Op == syntax.PipeAll
	var ops []syntax.BinCmdOperator
	var rights []*syntax.Stmt
	left := c
	for {
		ops = append(ops, left.Op)
		rights = append(rights, left.Y)
		x := left.X
		next, ok := x.Cmd.(*syntax.BinaryCmd)
		if !ok || x.Negated || x.Background || x.Coprocess || x.Disown || len(x.Redirs) > 0 ||
			(next.Op == syntax.Pipe || next.Op == syntax.PipeAll) != pipe {
			break
		}
		left = next
	}
	first := left.X
	if pipe {
		// Each side of a pipe runs in a subshell; what one prints may be
		// the code the next one runs.
		prev := first
		a.stmt(first, st.clone(), stdin)
		for i := len(rights) - 1; i >= 0; i-- {
			a.stmt(rights[i], st.clone(), a.stdinText(prev, st))
			prev = rights[i]
		}
		return res{st, st}
	}
	r := a.stmt(first, st, stdin)
	for i := len(rights) - 1; i >= 0; i-- {
		if a.budget() {
			break
		}
		if ops[i] == syntax.AndStmt {
			in := r.ok
			if in == r.any {
				in = in.clone()
			}
			y := a.stmt(rights[i], in, nil)
			r = res{y.ok, merge(r.any, y.any)}
		} else {
			in := r.any
			if in == r.ok {
				in = in.clone()
			}
			y := a.stmt(rights[i], in, nil)
			r = res{merge(r.ok, y.ok), merge(r.any, y.any)}
		}
	}
	return r
}

func (a *analyzer) ifClause(c *syntax.IfClause, st *state) res {
	cond := a.stmts(c.Cond, st)
	thenIn, elseIn := cond.ok, cond.any
	if thenIn == elseIn {
		thenIn = thenIn.clone()
	}
	th := a.stmts(c.Then, thenIn)
	el := res{elseIn, elseIn}
	if c.Else != nil {
		el = a.ifClause(c.Else, elseIn)
	}
	return res{merge(th.ok, el.ok), merge(th.any, el.any)}
}

func (a *analyzer) decl(c *syntax.DeclClause, st *state) {
	for _, as := range c.Args {
		if as == nil {
			continue
		}
		a.substsAssign(st, as)
		if as.Name == nil {
			if as.Value != nil {
				a.mention(a.field(st, as.Value).text)
			}
			continue
		}
		if as.Naked {
			if c.Variant != nil && (c.Variant.Value == "local" || c.Variant.Value == "declare" || c.Variant.Value == "typeset") {
				st.forget(as.Name.Value)
			}
			continue
		}
		a.assign(st, as)
	}
}

func (a *analyzer) assign(st *state, as *syntax.Assign) {
	if as == nil || as.Name == nil {
		return
	}
	name := as.Name.Value
	if as.Array != nil || as.Index != nil {
		st.forget(name)
		return
	}
	v := a.field(st, as.Value)
	a.mention(v.text)
	if v.dyn {
		if v.pat != string(wildAny) && !as.Append {
			st.setShape(name, v)
		} else {
			st.forget(name)
		}
		return
	}
	if as.Append {
		old, ok := st.lookup(a, name)
		if !ok {
			st.forget(name)
			return
		}
		v.text = old + v.text
	}
	st.setVar(name, v.text)
}

func (a *analyzer) call(c *syntax.CallExpr, st *state, stdin *string) res {
	for _, as := range c.Assigns {
		a.substsAssign(st, as)
	}
	for _, w := range c.Args {
		a.substs(st, w)
	}
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			a.assign(st, as)
		}
		return res{st, st}
	}
	var env map[string]field
	for _, as := range c.Assigns {
		if as != nil && as.Value != nil {
			v := a.field(st, as.Value)
			a.mention(v.text)
			if as.Name != nil {
				if env == nil {
					env = make(map[string]field)
				}
				env[as.Name.Value] = v
			}
		}
	}
	var args []field
	for _, w := range c.Args {
		for _, f := range a.fields(st, w, true) {
			a.mention(f.text)
			args = append(args, f)
		}
	}
	return a.dispatch(&ctx{st: st, stdin: stdin, op: a.srcOf(c), env: env}, args)
}

// substs analyses the command substitutions and process substitutions inside
// a word; they run before the command the word belongs to, in subshells.
func (a *analyzer) substs(st *state, w *syntax.Word) {
	if w == nil {
		return
	}
	for _, p := range w.Parts {
		a.substsPart(st, p)
	}
}

func (a *analyzer) substsAssign(st *state, as *syntax.Assign) {
	if as == nil {
		return
	}
	a.substs(st, as.Value)
	a.arith(st, as.Index)
	if as.Array != nil {
		for _, e := range as.Array.Elems {
			if e != nil {
				a.arith(st, e.Index)
				a.substs(st, e.Value)
			}
		}
	}
}

func (a *analyzer) substsPart(st *state, p syntax.WordPart) {
	a.nodes++
	if a.budget() {
		return
	}
	switch p := p.(type) {
	case *syntax.DblQuoted:
		for _, in := range p.Parts {
			a.substsPart(st, in)
		}
	case *syntax.CmdSubst:
		a.stmts(p.Stmts, st.clone())
	case *syntax.ProcSubst:
		a.stmts(p.Stmts, st.clone())
	case *syntax.ParamExp:
		a.arith(st, p.Index)
		if p.Slice != nil {
			a.arith(st, p.Slice.Offset)
			a.arith(st, p.Slice.Length)
		}
		if p.Repl != nil {
			a.substs(st, p.Repl.Orig)
			a.substs(st, p.Repl.With)
		}
		if p.Exp != nil {
			a.substs(st, p.Exp.Word)
		}
		if p.NestedParam != nil {
			a.substsPart(st, p.NestedParam)
		}
	case *syntax.ArithmExp:
		a.arith(st, p.X)
	case *syntax.BraceExp:
		for _, e := range p.Elems {
			a.substs(st, e)
		}
	}
}

// arith looks inside arithmetic for command substitutions and forgets the
// variables it assigns.
func (a *analyzer) arith(st *state, e syntax.ArithmExpr) {
	a.nodes++
	if a.budget() {
		return
	}
	switch e := e.(type) {
	case *syntax.Word:
		a.substs(st, e)
	case *syntax.BinaryArithm:
		switch e.Op {
		case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
			syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
			syntax.ShrAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
			if w, ok := e.X.(*syntax.Word); ok {
				st.forget(w.Lit())
			}
		}
		a.arith(st, e.X)
		a.arith(st, e.Y)
	case *syntax.UnaryArithm:
		if e.Op == syntax.Inc || e.Op == syntax.Dec {
			if w, ok := e.X.(*syntax.Word); ok {
				st.forget(w.Lit())
			}
		}
		a.arith(st, e.X)
	case *syntax.ParenArithm:
		a.arith(st, e.X)
	case *syntax.FlagsArithm:
		a.arith(st, e.X)
	}
}

func (a *analyzer) test(st *state, e syntax.TestExpr) {
	a.nodes++
	if a.budget() {
		return
	}
	switch e := e.(type) {
	case *syntax.Word:
		a.substs(st, e)
		a.mention(a.field(st, e).text)
	case *syntax.BinaryTest:
		a.test(st, e.X)
		a.test(st, e.Y)
	case *syntax.UnaryTest:
		a.test(st, e.X)
	case *syntax.ParenTest:
		a.test(st, e.X)
	}
}

// stdinText returns what the left side of a pipe writes, when it is a
// literal (echo, printf, cat of a here-document), so "echo 'rm x' | sh" and
// "echo f | xargs rm" can be followed.
func (a *analyzer) stdinText(s *syntax.Stmt, st *state) *string {
	if s == nil {
		return nil
	}
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return nil
	}
	var args []field
	for _, w := range c.Args {
		args = append(args, a.fields(st, w, true)...)
	}
	if len(args) == 0 {
		return nil
	}
	var out string
	switch baseName(args[0].text) {
	case "echo":
		rest := args[1:]
		for len(rest) > 0 && (rest[0].text == "-n" || rest[0].text == "-e" || rest[0].text == "-E" || rest[0].text == "-ne" || rest[0].text == "-en") {
			rest = rest[1:]
		}
		out = joinText(rest) + "\n"
	case "printf":
		rest := args[1:]
		if len(rest) > 0 && rest[0].text == "--" {
			rest = rest[1:]
		}
		out = strings.ReplaceAll(joinText(rest), `\n`, "\n")
	case "cat":
		found := false
		for _, rd := range s.Redirs {
			if rd != nil && (rd.Op == syntax.Hdoc || rd.Op == syntax.DashHdoc) {
				out, found = a.field(st, rd.Hdoc).text, true
			} else if rd != nil && rd.Op == syntax.WordHdoc {
				out, found = a.field(st, rd.Word).text+"\n", true
			}
		}
		if !found {
			return nil
		}
	default:
		return nil
	}
	return &out
}

func joinText(fs []field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.text
	}
	return strings.Join(parts, " ")
}
