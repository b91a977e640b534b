package shellscan

import (
	"path"
	"strings"
)

// Programs that run other commands over their input or a tree (xargs,
// find): the commands they run are dispatched again.

func hXargs(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "IELnPsdaL", optArg: "ile", long: []string{"max-args", "max-procs", "delimiter", "arg-file", "max-lines", "max-chars", "process-slot-var"}, stop: true})
	cmd := p.pos
	if len(cmd) == 0 {
		cmd = []field{lit("echo")}
	}
	var inputs []field
	if c.stdin != nil && len(p.vals("a", "arg-file")) == 0 {
		for _, w := range strings.Fields(*c.stdin) {
			inputs = append(inputs, lit(strings.Trim(w, `'"`)))
		}
	} else {
		inputs = []field{anyField("<stdin>")}
	}
	repl := ""
	if o, ok := p.opt("I", "i", "replace"); ok {
		repl = "{}"
		if o.hasVal && o.val.text != "" {
			repl = o.val.text
		}
	}
	inner := &ctx{st: c.st, op: c.op}
	if repl == "" {
		all := append(append([]field(nil), cmd...), inputs...)
		a.dispatch(inner, all)
		return c.same()
	}
	if len(inputs) > 8 {
		inputs = []field{anyField("<stdin>")}
	}
	for _, in := range inputs {
		var line []field
		for _, f := range cmd {
			if strings.Contains(f.text, repl) {
				if in.dyn {
					line = append(line, field{text: f.text, pat: strings.ReplaceAll(f.pat, repl, string(wildAny)), dyn: true})
				} else {
					line = append(line, field{text: strings.ReplaceAll(f.text, repl, in.text), pat: strings.ReplaceAll(f.pat, repl, in.text), dyn: f.dyn})
				}
				continue
			}
			line = append(line, f)
		}
		a.dispatch(inner, line)
	}
	return c.same()
}

// hFind handles -delete, -exec/-execdir/-ok and -fprint. What an action
// reaches is narrowed by a -name test that must hold for it: in
// "find . -name '*.orig' -delete" only files named *.orig, at any depth,
// the starting points included, are removed. Without parentheses an
// expression is an or-list (-o, ",") of and-lists, and an action runs only
// for files that passed the tests before it in its own and-list.
func hFind(a *analyzer, c *ctx, args []field) res {
	i := 0
	for i < len(args) && (args[i].text == "-H" || args[i].text == "-L" || args[i].text == "-P" || strings.HasPrefix(args[i].text, "-D") || strings.HasPrefix(args[i].text, "-O")) {
		i++
	}
	var roots []field
	for ; i < len(args); i++ {
		t := args[i].text
		if strings.HasPrefix(t, "-") || t == "(" || t == "!" || t == "\\(" {
			break
		}
		roots = append(roots, args[i])
	}
	if len(roots) == 0 {
		roots = []field{lit(".")}
	}
	grouped := false
	for _, f := range args[i:] {
		grouped = grouped || f.text == "(" || f.text == ")"
	}
	name := ""      // the -name pattern the current and-list requires, "" for none
	negate := false // the next test is negated
	for ; i < len(args); i++ {
		t := args[i].text
		not := negate
		negate = false
		switch t {
		case "!", "-not":
			negate = !not
		case "-o", "-or", ",":
			name = ""
		case "-name":
			if i+1 < len(args) {
				i++
				if !not && !grouped && !args[i].dyn && narrower(args[i].text, name) {
					name = args[i].text
				}
			}
		case "-delete":
			for _, r := range findReach(c, roots, name) {
				a.write(c.st, r.field, Remove, c.op, r.tree)
			}
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				a.write(c.st, args[i+1], Output, c.op, false)
				i++
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			found := findFound(c, roots, name)
			j := i + 1
			var cmd []field
			for ; j < len(args); j++ {
				if args[j].text == ";" || args[j].text == "+" {
					break
				}
				f := args[j]
				if strings.Contains(f.text, "{}") {
					if f.text == "{}" {
						f = found
					} else {
						f = field{text: f.text, pat: strings.ReplaceAll(f.pat, "{}", string(wildAny)), dyn: true}
					}
				}
				cmd = append(cmd, f)
			}
			inner := &ctx{st: c.st, op: c.op}
			if t == "-execdir" || t == "-okdir" {
				inner = c.chdir(anyField("$(dirname {})"))
			}
			a.dispatch(inner, cmd)
			i = j
		}
	}
	return c.same()
}

// narrower reports whether the -name pattern p says more about a file
// than the one already kept (more literal characters): either is a
// condition the file must meet, so one is enough to keep.
func narrower(p, kept string) bool {
	lits := func(s string) int { return len(s) - strings.Count(s, "*") - strings.Count(s, "?") }
	return kept == "" || lits(p) > lits(kept)
}

type reach struct {
	field
	tree bool
}

// findReach is what a find action may act on below roots: everything (a
// tree below each root), or, with a -name pattern, the files so named at
// any depth, the starting point itself included when its name may match.
func findReach(c *ctx, roots []field, name string) []reach {
	var out []reach
	for _, r := range roots {
		if name == "" {
			out = append(out, reach{r, true})
			continue
		}
		pat := unquotedLit(name).pat
		for _, d := range c.st.dirs {
			abs := joinPath(d, r)
			if abs.dyn || globMatch(pat, path.Base(abs.text)) {
				out = append(out, reach{field: abs})
			}
			out = append(out, reach{field: field{
				text: strings.TrimSuffix(abs.text, "/") + "/**/" + name,
				pat:  strings.TrimSuffix(abs.pat, "/") + "/" + string(wildAny) + pat,
				dyn:  true,
			}})
			if r.isAbs() || r.floating() {
				break
			}
		}
	}
	return out
}

// findFound is what {} stands for in a find action: any path at or below
// the starting points, or with a -name pattern one so named.
func findFound(c *ctx, roots []field, name string) field {
	if len(roots) != 1 || len(c.st.dirs) != 1 {
		if name == "" {
			return anyField("{}")
		}
		return field{text: "{}", pat: string(wildAny) + unquotedLit(name).pat, dyn: true}
	}
	r := joinPath(c.st.dirs[0], roots[0])
	// No "/" after the root: {} is the starting point too.
	p := strings.TrimSuffix(r.pat, "/") + string(wildAny)
	if name != "" {
		p += unquotedLit(name).pat
	}
	return field{text: "{}", pat: p, dyn: true}
}

// hGo follows the programs the go command is told to run: go test/run -exec
// X, go build/test/… -toolexec X, go vet -vettool X, the same flags in
// GOFLAGS (for this command, or stored with go env -w, which applies them
// to every later go command: they are reported now).
func hGo(a *analyzer, c *ctx, args []field) res {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].text, "-") {
		if t := strings.TrimLeft(args[i].text, "-"); t == "C" {
			i++ // go -C DIR
		}
		i++
	}
	if i >= len(args) {
		return c.same()
	}
	verb, rest := args[i].text, args[i+1:]
	if f, ok := c.getenv(a, "GOFLAGS"); ok {
		a.goFlags(c, f)
	}
	if verb == "env" {
		for _, f := range rest {
			if strings.HasPrefix(f.text, "GOFLAGS=") {
				a.goFlags(c, sub(f, len("GOFLAGS=")))
			}
		}
		return c.same()
	}
	for j := 0; j < len(rest); j++ {
		t := rest[j].text
		if t == "-args" || t == "--args" || t == "--" {
			break
		}
		if !strings.HasPrefix(t, "-") {
			continue
		}
		name, val, eq := strings.Cut(strings.TrimLeft(t, "-"), "=")
		if !goRunsFlag(name) {
			continue
		}
		v := field{}
		switch {
		case eq:
			v = sub(rest[j], len(t)-len(val))
		case j+1 < len(rest):
			j++
			v = rest[j]
		}
		a.goRuns(c, v)
	}
	return c.same()
}

// goRunsFlag names the go flags whose value is a program to run.
func goRunsFlag(name string) bool { return name == "exec" || name == "toolexec" || name == "vettool" }

// goFlags follows the program-running flags in a GOFLAGS value.
func (a *analyzer) goFlags(c *ctx, v field) {
	if v.dyn {
		a.addProgram(anyField(v.text), nil, c.st.dirs) // GOFLAGS not known: any tool may run
		return
	}
	for _, f := range strings.Fields(v.text) {
		name, val, eq := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if eq && goRunsFlag(name) {
			a.goRuns(c, lit(val))
		}
	}
}

// goRuns reports the command line a go flag names.
func (a *analyzer) goRuns(c *ctx, v field) {
	if v.dyn {
		a.addProgram(anyField(v.text), nil, c.st.dirs)
		return
	}
	if words := goSplit(v.text); len(words) > 0 {
		a.dispatch(&ctx{st: c.st.clone(), op: c.op, env: c.env}, words)
	}
}

// goSplit splits a go flag's command line the way go does: on blanks, with
// '…' and "…" quoting whole words.
func goSplit(s string) []field {
	var out []field
	for {
		s = strings.TrimLeft(s, " \t\n\r")
		if s == "" {
			return out
		}
		if q := s[0]; q == '\'' || q == '"' {
			if end := strings.IndexByte(s[1:], q); end >= 0 {
				out = append(out, lit(s[1:1+end]))
				s = s[2+end:]
				continue
			}
		}
		end := strings.IndexAny(s, " \t\n\r")
		if end < 0 {
			end = len(s)
		}
		out = append(out, lit(s[:end]))
		s = s[end:]
	}
}
