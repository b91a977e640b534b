package shellscan

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// fields expands a word into the fields Bash would produce, as far as that is
// known statically: quotes removed, known variables substituted, brace
// expansion done (split) and globs turned into wildcards.
func (a *analyzer) fields(st *state, w *syntax.Word, split bool) []field {
	if w == nil || len(w.Parts) == 0 {
		return nil
	}
	a.nodes++
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "~{\\*?[") {
			return []field{lit(l.Value)}
		}
	}
	if split {
		// SplitBraces rewrites the word in place; that is fine, the AST
		// is ours.
		syntax.SplitBraces(w)
	}
	alts := []field{{}}
	var done []field // words ended by field splitting
	splitted := false
	for i, part := range w.Parts {
		var pf []field
		if i == 0 {
			if l, ok := part.(*syntax.Lit); ok && strings.HasPrefix(l.Value, "~") {
				pf = []field{a.tilde(st, l.Value)}
			}
		}
		if pf == nil && split {
			switch f := a.unquoted(st, part); {
			case f == nil:
			case !f.dyn:
				var ended []field
				alts, ended = splitValue(st, alts, f.text)
				done = append(done, ended...)
				splitted = true
				continue
			default:
				pf = []field{*f}
			}
		}
		if pf == nil {
			pf = a.part(st, part, split)
		}
		alts = product(alts, pf)
	}
	if splitted {
		alts = nonEmpty(alts) // an unquoted expansion to nothing is no word
	}
	return append(done, alts...)
}

// unquoted expands an unquoted parameter or command substitution whose
// value is known (a literal, to be split and globbed) or whose form is
// known (a fresh temporary file); nil for anything else.
func (a *analyzer) unquoted(st *state, part syntax.WordPart) *field {
	var f field
	switch p := part.(type) {
	case *syntax.ParamExp:
		f = a.param(st, p)
	case *syntax.CmdSubst:
		v, ok := a.substValue(st, p)
		if !ok {
			return nil
		}
		f = v
	default:
		return nil
	}
	if !f.dyn {
		return &f
	}
	if f.pat == string(wildAny) {
		return nil
	}
	if seps, ok := st.ifs(); !ok || seps != defaultIFS {
		// A shape assumes the default splitting; under another IFS
		// the value may fall apart anywhere.
		any := anyField(f.text)
		return &any
	}
	return &f
}

// splitValue appends the known value v of an unquoted expansion to the word
// being built (alts), splitting it on IFS the way Bash does: the pieces
// before the last end words of their own (returned in ended) and globs in
// them match files. Under an IFS not known statically, the value may split
// anywhere.
func splitValue(st *state, alts []field, v string) (rest, ended []field) {
	seps, ok := st.ifs()
	if !ok {
		any := anyField(v)
		return product(alts, []field{any}), []field{any}
	}
	isSep := func(r rune) bool { return strings.ContainsRune(seps, r) }
	pieces := strings.FieldsFunc(v, isSep)
	if len(pieces) == 0 {
		if v == "" {
			return alts, nil
		}
		return []field{{}}, nonEmpty(alts)
	}
	if first, _ := utf8.DecodeRuneInString(v); isSep(first) {
		ended = nonEmpty(alts)
		alts = []field{{}}
	}
	for i, pc := range pieces {
		alts = product(alts, []field{globbed(pc)})
		if i < len(pieces)-1 {
			ended = append(ended, alts...)
			alts = []field{{}}
		}
	}
	if last, _ := utf8.DecodeLastRuneInString(v); isSep(last) {
		ended = append(ended, alts...)
		alts = []field{{}}
	}
	return alts, ended
}

// globbed is a piece of an unquoted expansion: with a glob character in it,
// Bash matches it against files.
func globbed(s string) field {
	if strings.ContainsAny(s, "*?[") {
		return unquotedLit(s)
	}
	return lit(s)
}

func nonEmpty(fs []field) []field {
	out := fs[:0:0]
	for _, f := range fs {
		if f.text != "" || f.pat != "" {
			out = append(out, f)
		}
	}
	return out
}

// field is fields without brace expansion or splitting, joined into one.
func (a *analyzer) field(st *state, w *syntax.Word) field {
	fs := a.fields(st, w, false)
	if len(fs) == 0 {
		return field{}
	}
	return fs[0]
}

const maxAlternatives = 64

func product(alts, next []field) []field {
	if len(next) == 1 {
		for i := range alts {
			alts[i] = concat(alts[i], next[0])
		}
		return alts
	}
	if len(alts)*len(next) > maxAlternatives {
		// Too many brace alternatives to list: keep one, widened to
		// match anything the braces could have produced.
		return []field{concat(alts[0], anyField("{…}"))}
	}
	out := make([]field, 0, len(alts)*len(next))
	for _, x := range alts {
		for _, y := range next {
			out = append(out, concat(x, y))
		}
	}
	return out
}

func (a *analyzer) tilde(st *state, v string) field {
	prefix, rest := v, ""
	if i := strings.IndexByte(v, '/'); i >= 0 {
		prefix, rest = v[:i], v[i:]
	}
	var head field
	switch prefix {
	case "~":
		if h, ok := st.lookup(a, "HOME"); ok {
			head = lit(h)
		} else {
			head = anyField("~")
		}
	case "~+":
		if d, ok := st.pwd(); ok {
			head = lit(d)
		} else {
			head = anyField("~+")
		}
	default:
		head = anyField(prefix)
	}
	return concat(head, unquotedLit(rest))
}

func (a *analyzer) part(st *state, part syntax.WordPart, split bool) []field {
	switch p := part.(type) {
	case *syntax.Lit:
		return []field{unquotedLit(p.Value)}
	case *syntax.SglQuoted:
		if p.Dollar {
			return []field{lit(ansiC(p.Value))}
		}
		return []field{lit(p.Value)}
	case *syntax.DblQuoted:
		f := lit("")
		for _, in := range p.Parts {
			if l, ok := in.(*syntax.Lit); ok {
				f = concat(f, lit(dqUnescape(l.Value)))
				continue
			}
			fs := a.part(st, in, false)
			if len(fs) > 0 {
				f = concat(f, fs[0])
			}
		}
		return []field{f}
	case *syntax.ParamExp:
		return []field{a.param(st, p)}
	case *syntax.CmdSubst:
		if f, ok := a.substValue(st, p); ok {
			return []field{f}
		}
		return []field{anyField(a.srcOf(p))}
	case *syntax.ProcSubst:
		// Bash substitutes a /dev/fd path; writes there are pipes, not files.
		f := field{text: a.srcOf(p), pat: "/dev/fd/" + string(wildAny), dyn: true}
		if p.Op == syntax.CmdIn && len(p.Stmts) == 1 {
			f.feed = a.stdinText(p.Stmts[0], st)
		}
		return []field{f}
	case *syntax.BraceExp:
		if !split || p.Sequence {
			return []field{anyField(a.braceText(p))}
		}
		var out []field
		for _, e := range p.Elems {
			fs := a.fields(st, e, true)
			if len(fs) == 0 {
				fs = []field{lit("")} // x{,.old} is "x" and "x.old"
			}
			out = append(out, fs...)
			if len(out) > maxAlternatives {
				return []field{anyField(a.braceText(p))}
			}
		}
		if len(out) == 0 {
			out = []field{lit("")}
		}
		return out
	case *syntax.ExtGlob:
		return []field{{text: a.srcOf(p), pat: string(wildGlob), dyn: true}}
	case nil:
		return []field{lit("")}
	default: // ArithmExp and anything newer
		return []field{anyField(a.srcOf(part))}
	}
}

func (a *analyzer) braceText(b *syntax.BraceExp) string {
	sep := ","
	if b.Sequence {
		sep = ".."
	}
	parts := make([]string, 0, len(b.Elems))
	for _, e := range b.Elems {
		parts = append(parts, a.srcOf(e))
	}
	return "{" + strings.Join(parts, sep) + "}"
}

// substValue is what a command substitution prints when that is known
// statically: $(pwd), $(echo WORDS), and the fresh name $(mktemp) makes.
func (a *analyzer) substValue(st *state, p *syntax.CmdSubst) (field, bool) {
	if len(p.Stmts) != 1 || p.Stmts[0] == nil || len(p.Stmts[0].Redirs) > 0 || p.Stmts[0].Background {
		return field{}, false
	}
	c, ok := p.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 || len(c.Assigns) > 0 {
		return field{}, false
	}
	switch c.Args[0].Lit() {
	case "pwd":
		if d, ok := st.pwd(); ok && len(c.Args) == 1 {
			return lit(d), true
		}
	case "echo":
		return a.echoValue(st, c.Args[1:])
	case "mktemp":
		return a.mktempValue(st, p, c.Args[1:])
	}
	return field{}, false
}

// echoValue is the output of echo WORDS, trailing newline removed as the
// substitution does, when every word is known and no escape could be
// interpreted (zsh's echo, and bash's with -e or xpg_echo, would).
func (a *analyzer) echoValue(st *state, words []*syntax.Word) (field, bool) {
	var out []string
	opts := true
	for _, w := range words {
		for _, f := range a.fields(st, w, true) {
			if f.dyn || strings.ContainsRune(f.text, '\\') {
				return field{}, false
			}
			if opts && len(f.text) > 1 && f.text[0] == '-' && strings.Trim(f.text[1:], "neE") == "" {
				continue // -n, -e, -E: without a backslash they change nothing here
			}
			opts = false
			out = append(out, f.text)
		}
	}
	return lit(strings.TrimRight(strings.Join(out, " "), "\n")), true
}

// mktempValue is the name mktemp prints: its template (tmp.XXXXXXXXXX by
// default) with the trailing X's random, in the directory it is told
// (-p DIR, --tmpdir=DIR, else $TMPDIR or /tmp) or, for a template of one's
// own and no directory option, relative to the working directory. The file
// is new: mktemp creates it exclusively, so it is none of the files already
// there. A value of $TMPDIR not known statically is taken not to contain
// blanks.
func (a *analyzer) mktempValue(st *state, p *syntax.CmdSubst, words []*syntax.Word) (field, bool) {
	var args []field
	for _, w := range words {
		args = append(args, a.fields(st, w, true)...)
	}
	pa := parseArgs(args, optSpec{arg: "p", long: []string{"suffix"}})
	if len(pa.pos) > 1 {
		return field{}, false
	}
	template := lit("tmp.XXXXXXXXXX")
	inDir := len(pa.pos) == 0 || pa.has("t", "p", "tmpdir")
	if len(pa.pos) == 1 {
		template = pa.pos[0]
	}
	suffix := ""
	for _, v := range pa.vals("suffix") {
		if v.dyn {
			return field{}, false
		}
		suffix = v.text
	}
	name := template.text
	if template.dyn || strings.ContainsAny(name+suffix, " \t\n*?[\\") || inDir && strings.Contains(name, "/") {
		return field{}, false
	}
	xs := len(name) - len(strings.TrimRight(name, "X"))
	if xs < 3 {
		return field{}, false // mktemp refuses such a template
	}
	pat := name[:len(name)-xs] + string(wildGlob) + suffix
	text := a.srcOf(p)
	if !inDir {
		return field{text: text, pat: pat, dyn: true, fresh: true}, true
	}
	var dir field
	switch {
	case pa.has("t"):
		dir = anyField("$TMPDIR") // $TMPDIR first, then -p, then /tmp
	case len(pa.vals("p", "tmpdir")) > 0:
		vs := pa.vals("p", "tmpdir")
		dir = vs[len(vs)-1]
	default:
		if v, ok := st.lookup(a, "TMPDIR"); ok && v != "" {
			dir = lit(v)
		} else if ok {
			dir = lit("/tmp")
		} else {
			dir = anyField("$TMPDIR")
		}
	}
	if !dir.dyn && strings.ContainsAny(dir.text, " \t\n") {
		return field{}, false
	}
	d := cleanField(dir)
	if !d.isAbs() && !d.floating() {
		d = joinPath(st.dirs[0], d)
		if len(st.dirs) != 1 {
			return field{}, false
		}
	}
	return field{text: text, pat: strings.TrimSuffix(d.pat, "/") + "/" + pat, dyn: true, fresh: true}, true
}

func (a *analyzer) param(st *state, p *syntax.ParamExp) field {
	src := a.srcOf(p)
	if p.Param == nil || p.Excl || p.Length || p.Width || p.IsSet || p.Index != nil ||
		p.Slice != nil || p.Repl != nil || p.Names != 0 || len(p.Modifiers) > 0 ||
		p.Flags != nil || p.NestedParam != nil {
		return anyField(src)
	}
	v, ok := st.lookup(a, p.Param.Value)
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull,
			syntax.AssignUnset, syntax.AssignUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
			if ok && v != "" {
				return lit(v)
			}
			if f, ok := st.shape(p.Param.Value); ok {
				return f
			}
		}
		return anyField(src)
	}
	if ok {
		return lit(v)
	}
	if f, ok := st.shape(p.Param.Value); ok {
		return f
	}
	return anyField(src)
}

// unquotedLit removes backslash quoting from an unquoted literal and turns
// glob characters into wildcards.
func unquotedLit(s string) field {
	if !strings.ContainsAny(s, "\\*?[") {
		return lit(s)
	}
	var text, pat strings.Builder
	dyn := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				if s[i] == '\n' {
					continue
				}
				text.WriteByte(s[i])
				pat.WriteByte(s[i])
				continue
			}
		case '*', '?':
			text.WriteByte(c)
			pat.WriteByte(wildGlob)
			dyn = true
			continue
		case '[':
			if j := strings.IndexByte(s[i+1:], ']'); j >= 0 {
				end := i + 1 + j
				if j == 0 { // "[]...]" starts with a literal ']'
					if k := strings.IndexByte(s[end+1:], ']'); k >= 0 {
						end = end + 1 + k
					}
				}
				text.WriteString(s[i : end+1])
				pat.WriteByte(wildGlob)
				dyn = true
				i = end
				continue
			}
		}
		text.WriteByte(c)
		pat.WriteByte(c)
	}
	return field{text: text.String(), pat: pat.String(), dyn: dyn}
}

func dqUnescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				b.WriteByte(s[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the body of a $'…' string, since $'\x68arness-tasks.json'
// is an easy way to hide a file name from a literal match.
func ansiC(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			maxDigits := 2
			if e == 'u' {
				maxDigits = 4
			} else if e == 'U' {
				maxDigits = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < maxDigits && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else if n <= utf8.MaxRune {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isPseudoDevice reports writes that cannot reach a regular file, which
// every policy would otherwise have to allow-list (2>/dev/null is everywhere).
func isPseudoDevice(f field) bool {
	p := f.pat
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/full":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") && !strings.Contains(p[len("/dev/fd/"):], "/")
}
