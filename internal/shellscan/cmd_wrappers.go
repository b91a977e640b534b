package shellscan

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Wrappers: programs that run the rest of their command line (env, sudo,
// timeout, npx, …), handled by dispatching that line again.

func hPass(a *analyzer, c *ctx, args []field) res { return a.dispatch(c, args) }

// hWrap is for wrappers that run the rest of the line as a separate program.
func hWrap(sp optSpec) handler {
	return func(a *analyzer, c *ctx, args []field) res {
		p := parseArgs(args, sp)
		a.dispatch(c, p.pos)
		return c.same()
	}
}

// hWrapPass is for builtins whose command runs in the current shell.
func hWrapPass(sp optSpec) handler {
	return func(a *analyzer, c *ctx, args []field) res {
		return a.dispatch(c, parseArgs(args, sp).pos)
	}
}

func hCommand(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{stop: true})
	if p.has("v", "V") {
		return c.same() // only looks the name up
	}
	return a.dispatch(c, p.pos)
}

func hTime(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "fo", long: []string{"format", "output"}, stop: true})
	for _, o := range p.opts {
		if o.hasVal && optIs(o.name, []string{"o", "output"}) {
			kind := Output
			if p.has("a", "append") {
				kind = Append
			}
			a.write(c.st, o.val, kind, c.op, false)
		}
	}
	return a.dispatch(c, p.pos)
}

func hChrt(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "T", long: []string{"sched-runtime", "sched-deadline", "sched-period"}, stop: true})
	if len(p.pos) > 1 && !p.has("p", "pid") {
		a.dispatch(c, p.pos[1:])
	}
	return c.same()
}

func hTimeout(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "sk", long: []string{"signal", "kill-after"}, stop: true})
	if len(p.pos) > 1 {
		a.dispatch(c, p.pos[1:])
	}
	return c.same()
}

func hChroot(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{long: []string{"userspec", "groups"}, stop: true})
	if len(p.pos) > 1 {
		a.dispatch(c, p.pos[1:])
	}
	return c.same()
}

func hEnv(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "uCSP", long: []string{"unset", "chdir", "split-string"}, stop: true})
	cc := c
	for _, d := range p.vals("C", "chdir") {
		cc = cc.chdir(d)
	}
	rest := p.pos
	for len(rest) > 0 && strings.Contains(rest[0].text, "=") && !strings.HasPrefix(rest[0].text, "=") {
		name, v, _ := strings.Cut(rest[0].text, "=")
		env := make(map[string]field, len(cc.env)+1)
		for k, x := range cc.env {
			env[k] = x
		}
		if rest[0].dyn {
			env[name] = anyField(v)
		} else {
			env[name] = lit(v)
		}
		cc = &ctx{st: cc.st, stdin: cc.stdin, op: cc.op, env: env}
		rest = rest[1:]
	}
	for _, s := range p.vals("S", "split-string") {
		// -S splits its string into words; parsing it as shell is close
		// enough and catches "env -S 'rm x'".
		a.script(s.text+" "+joinText(rest), cc.st.clone(), syntax.LangBash, false)
		return c.same()
	}
	a.dispatch(cc, rest)
	return c.same()
}

func hSudo(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "ugpCDrtUTRh", long: []string{"user", "group", "prompt", "close-from", "chdir", "role", "type", "other-user", "command-timeout", "chroot", "host"}, stop: true})
	cc := c
	for _, d := range p.vals("D", "chdir") {
		cc = cc.chdir(d)
	}
	rest := p.pos
	for len(rest) > 0 && strings.Contains(rest[0].text, "=") && !strings.HasPrefix(rest[0].text, "=") {
		rest = rest[1:]
	}
	if p.has("e", "edit") {
		for _, f := range rest {
			a.write(cc.st, f, InPlace, c.op, false)
		}
		return c.same()
	}
	if p.has("s", "shell", "i", "login") && len(rest) > 0 {
		a.script(joinText(rest), cc.st.clone(), syntax.LangBash, false)
		return c.same()
	}
	a.dispatch(cc, rest)
	return c.same()
}

func hDoas(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "uC", stop: true})
	a.dispatch(c, p.pos)
	return c.same()
}

func hBusybox(a *analyzer, c *ctx, args []field) res {
	if len(args) > 0 && strings.HasPrefix(args[0].text, "-") {
		return c.same()
	}
	return a.dispatch(c, args)
}

func hFlock(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "wEc", long: []string{"timeout", "conflict-exit-code", "command"}, stop: true})
	for _, s := range p.vals("c", "command") {
		a.script(s.text, c.st.clone(), syntax.LangBash, false)
	}
	if len(p.pos) > 1 {
		rest := p.pos[1:]
		if rest[0].text == "-c" || rest[0].text == "--command" {
			if len(rest) > 1 {
				a.script(rest[1].text, c.st.clone(), syntax.LangBash, false)
			}
			return c.same()
		}
		a.dispatch(c, rest)
	}
	return c.same()
}

func hWatch(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "nq", optArg: "d", long: []string{"interval", "equexit"}, stop: true})
	if p.has("x", "exec") {
		a.dispatch(c, p.pos)
	} else if len(p.pos) > 0 {
		a.script(joinText(p.pos), c.st.clone(), syntax.LangBash, false)
	}
	return c.same()
}

func hSu(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "cgGsuw", long: []string{"command", "group", "supp-group", "shell", "user", "whitelist-environment", "session-command"}})
	for _, s := range p.vals("c", "command", "session-command") {
		a.script(s.text, c.st.clone(), syntax.LangBash, false)
	}
	return c.same()
}

func hScript(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "cEIOBTm", long: []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format", "output-limit"}})
	for _, s := range p.vals("c", "command") {
		a.script(s.text, c.st.clone(), syntax.LangBash, false)
	}
	for _, f := range p.vals("I", "log-in", "O", "log-out", "B", "log-io", "T", "log-timing") {
		a.write(c.st, f, Output, c.op, false)
	}
	for _, f := range p.pos {
		kind := Output
		if p.has("a", "append") {
			kind = Append
		}
		a.write(c.st, f, kind, c.op, false)
	}
	return c.same()
}

// hRunSub handles "uv run CMD", "bundle exec CMD" and the like.
func hRunSub(sub string) handler {
	return func(a *analyzer, c *ctx, args []field) res {
		for i, f := range args {
			if f.text == sub {
				rest := args[i+1:]
				for len(rest) > 0 && strings.HasPrefix(rest[0].text, "-") {
					if rest[0].text == "--" {
						rest = rest[1:]
						break
					}
					rest = rest[1:]
				}
				a.dispatch(c, rest)
				break
			}
			if !strings.HasPrefix(f.text, "-") {
				break
			}
		}
		return c.same()
	}
}

func hNpx(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "pc", long: []string{"package", "call"}, stop: true})
	for _, s := range p.vals("c", "call") {
		a.script(s.text, c.st.clone(), syntax.LangBash, false)
	}
	a.dispatch(c, p.pos)
	return c.same()
}
