package shellscan

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shell builtins that change what later commands see: the directory, the
// variables, the scripts they source or evaluate.

func hCd(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{})
	var target field
	switch {
	case len(p.pos) == 0:
		if h, ok := c.st.lookup(a, "HOME"); ok {
			target = lit(h)
		} else {
			target = anyField("$HOME")
		}
	case p.pos[0].text == "-":
		target = anyField("$OLDPWD")
	default:
		target = p.pos[0]
	}
	ok := c.st.clone()
	ok.dirs = chdirs(c.st.dirs, target)
	ok.unsetPwd()
	// cd may fail, and then later commands run where the shell was.
	return res{ok, merge(ok, c.st)}
}

func (s *state) unsetPwd() {
	if _, ok := s.vars["PWD"]; ok {
		s.own()
		delete(s.vars, "PWD")
	}
}

func hPushd(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{})
	ok := c.st.clone()
	ok.stack = append(ok.stack, c.st.dirs)
	if len(p.pos) == 0 || strings.HasPrefix(p.pos[0].text, "+") || strings.HasPrefix(p.pos[0].text, "-") {
		ok.dirs = []field{unknownDir}
	} else {
		ok.dirs = chdirs(c.st.dirs, p.pos[0])
	}
	ok.unsetPwd()
	return res{ok, merge(ok, c.st)}
}

func hPopd(a *analyzer, c *ctx, args []field) res {
	ok := c.st.clone()
	if n := len(ok.stack); n > 0 && len(args) == 0 {
		ok.dirs = ok.stack[n-1]
		ok.stack = ok.stack[:n-1]
	} else {
		ok.dirs = []field{unknownDir}
	}
	ok.unsetPwd()
	return res{ok, merge(ok, c.st)}
}

func hEval(a *analyzer, c *ctx, args []field) res {
	if len(args) > 0 && args[0].text == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return c.same()
	}
	// eval runs in the current shell, so its cd's and assignments persist.
	return a.script(joinText(args), c.st, syntax.LangBash, false)
}

func hTrap(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{})
	if len(p.pos) >= 2 && p.pos[0].text != "-" && p.pos[0].text != "" {
		a.script(p.pos[0].text, c.st.clone(), syntax.LangBash, false)
	}
	return c.same()
}

func hSource(a *analyzer, c *ctx, args []field) res {
	if len(args) > 0 && args[0].feed != nil {
		return a.script(*args[0].feed, c.st, syntax.LangBash, false)
	}
	// The sourced file can set any variable; its cd's are not followed.
	c.st.forgetAll()
	return c.same()
}

func hUnset(a *analyzer, c *ctx, args []field) res {
	for _, f := range parseArgs(args, optSpec{}).pos {
		c.st.forget(f.text)
	}
	return c.same()
}

func hRead(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "adinNptu"})
	for _, f := range p.pos {
		c.st.forget(f.text)
	}
	for _, f := range p.vals("a") {
		c.st.forget(f.text)
	}
	c.st.forget("REPLY")
	return c.same()
}

func hForgetArrays(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "dnOsuC"})
	for _, f := range p.pos {
		c.st.forget(f.text)
	}
	c.st.forget("MAPFILE")
	return c.same()
}

// hExport handles export/declare/… reached as plain commands (through
// "builtin" or "command"); the parser's DeclClause covers the usual case.
func hExport(a *analyzer, c *ctx, args []field) res {
	for _, f := range args {
		name, v, ok := strings.Cut(f.text, "=")
		if strings.HasPrefix(f.text, "-") || name == "" {
			continue
		}
		if ok && !f.dyn {
			c.st.setVar(name, v)
		} else {
			c.st.forget(name)
		}
	}
	return c.same()
}

func hPrintf(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "v", stop: true})
	for _, f := range p.vals("v") {
		c.st.forget(f.text)
	}
	return c.same()
}

// hShell follows the code a shell is given with -c, on stdin from a
// here-document or here-string, or from a literal pipe.
func hShell(a *analyzer, c *ctx, args []field) res {
	return shell(a, c, args, syntax.LangBash)
}

func hShellLang(lang syntax.LangVariant) handler {
	return func(a *analyzer, c *ctx, args []field) res { return shell(a, c, args, lang) }
}

func shell(a *analyzer, c *ctx, args []field, lang syntax.LangVariant) res {
	cmdMode, stdinMode := false, false
	i := 0
loop:
	for ; i < len(args); i++ {
		t := args[i].text
		switch {
		case args[i].dyn:
			break loop
		case t == "--" || t == "-":
			i++
			stdinMode = stdinMode || t == "-"
			break loop
		case strings.HasPrefix(t, "--"):
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			consumes := false
			for j := 1; j < len(t); j++ {
				switch t[j] {
				case 'c':
					cmdMode = true
				case 's':
					stdinMode = true
				case 'o', 'O':
					consumes = true
				}
			}
			if consumes {
				i++
			}
		default:
			break loop
		}
	}
	var rest []field
	if i < len(args) {
		rest = args[i:]
	}
	if cmdMode {
		if len(rest) > 0 {
			a.script(rest[0].text, c.st.clone(), lang, false)
		}
		return c.same()
	}
	if len(rest) > 0 && !stdinMode {
		if rest[0].feed != nil {
			a.script(*rest[0].feed, c.st.clone(), lang, false)
		}
		return c.same() // otherwise runs a script file, which is not visible here
	}
	if c.stdin != nil {
		a.script(*c.stdin, c.st.clone(), lang, false)
	}
	return c.same()
}
