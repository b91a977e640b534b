package shellscan

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

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
	if a.visit() {
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
	if a.visit() {
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
	if a.visit() {
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
