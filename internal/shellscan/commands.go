package shellscan

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ctx is what a simple command runs with.
type ctx struct {
	st    *state
	stdin *string // literal text on stdin, when known
	op    string  // source of the command, for Write.Op
	// env holds the variables set for this command alone (NAME=v cmd,
	// env NAME=v cmd).
	env map[string]field
}

// getenv returns what the program sees in its environment variable name,
// and whether that is known to be set.
func (c *ctx) getenv(a *analyzer, name string) (field, bool) {
	if f, ok := c.env[name]; ok {
		return f, true
	}
	if v, ok := c.st.lookup(a, name); ok {
		return lit(v), true
	}
	if f, ok := c.st.shape(name); ok {
		return f, true
	}
	if v, ok := c.st.vars[name]; ok && v == unknownVar {
		return anyField("$" + name), true
	}
	return field{}, false
}

func (c *ctx) same() res { return res{c.st, c.st} }

// chdir returns a context whose working directory is dir (env -C, sudo -D,
// git -C, …), leaving the caller's state alone.
func (c *ctx) chdir(dir field) *ctx {
	st := c.st.clone()
	st.dirs = chdirs(c.st.dirs, dir)
	return &ctx{st: st, stdin: c.stdin, op: c.op, env: c.env}
}

func chdirs(dirs []field, dir field) []field {
	out := make([]field, 0, len(dirs))
	for _, d := range dirs {
		out = append(out, joinPath(d, dir))
		if dir.isAbs() || dir.floating() {
			break
		}
	}
	return dedupeDirs(out)
}

type handler func(a *analyzer, c *ctx, args []field) res

var handlers map[string]handler

func baseName(s string) string {
	if s == "" {
		return ""
	}
	return path.Base(s)
}

// dispatch handles one simple command whose words are args.
func (a *analyzer) dispatch(c *ctx, args []field) res {
	if len(args) == 0 || a.budget() {
		return c.same()
	}
	a.nodes++
	name := args[0]
	a.addProgram(name, args[1:], c.st.dirs)
	if name.dyn {
		return c.same()
	}
	if body, ok := c.st.funcs[name.text]; ok && !a.inCall(name.text) {
		// Functions run in the calling shell, with its directory and
		// variables, so they are analysed at each call.
		a.calls = append(a.calls, name.text)
		r := a.stmt(body, c.st, c.stdin)
		a.calls = a.calls[:len(a.calls)-1]
		return r
	}
	base := baseName(name.text)
	if h, ok := handlers[base]; ok {
		return h(a, c, args[1:])
	}
	if kind := interpreter(base); kind != "" {
		a.interp(c, kind, args[1:])
	}
	return c.same()
}

func (a *analyzer) inCall(name string) bool {
	for _, n := range a.calls {
		if n == name {
			return true
		}
	}
	return false
}

func init() {
	handlers = map[string]handler{
		// Shell state.
		"cd":     hCd,
		"pushd":  hPushd,
		"popd":   hPopd,
		"eval":   hEval,
		"trap":   hTrap,
		"source": hSource,
		".":      hSource,
		"unset":  hUnset,
		"read":   hRead,
		"export": hExport, "readonly": hExport, "local": hExport, "declare": hExport, "typeset": hExport,
		"mapfile": hForgetArrays, "readarray": hForgetArrays,
		"printf": hPrintf,
		// Shells.
		"bash": hShell, "sh": hShell, "zsh": hShellLang(syntax.LangZsh), "dash": hShell, "ksh": hShell,
		"mksh": hShell, "ash": hShell, "fish": hShell, "busybox": hBusybox, "toybox": hBusybox,
		// Wrappers that run the rest of their arguments as a command.
		"env": hEnv, "sudo": hSudo, "doas": hDoas, "nice": hWrap(optSpec{arg: "n", long: []string{"adjustment"}, stop: true, digits: true}),
		"nohup":    hWrap(optSpec{stop: true}),
		"setsid":   hWrap(optSpec{stop: true}),
		"builtin":  hPass,
		"command":  hCommand,
		"exec":     hWrapPass(optSpec{arg: "a", stop: true}),
		"time":     hTime,
		"stdbuf":   hWrap(optSpec{arg: "ioe", long: []string{"input", "output", "error"}, stop: true}),
		"ionice":   hWrap(optSpec{arg: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}, stop: true}),
		"chrt":     hChrt,
		"timeout":  hTimeout,
		"unbuffer": hWrap(optSpec{stop: true}),
		"chroot":   hChroot,
		"xargs":    hXargs,
		"find":     hFind,
		"flock":    hFlock,
		"watch":    hWatch,
		"su":       hSu,
		"runuser":  hSu,
		"script":   hScript,
		"uv":       hRunSub("run"), "poetry": hRunSub("run"), "pipenv": hRunSub("run"),
		"pdm": hRunSub("run"), "rye": hRunSub("run"), "bundle": hRunSub("exec"),
		"npx": hNpx,
		// File writers.
		"tee":      hTee,
		"sed":      hSed,
		"gsed":     hSed,
		"cp":       hCopy(CopyTarget, optSpec{arg: "St", long: []string{"suffix", "target-directory"}}),
		"install":  hInstall,
		"rsync":    hRsync,
		"mv":       hCopy(MoveTarget, optSpec{arg: "St", long: []string{"suffix", "target-directory"}}),
		"ln":       hCopy(Link, optSpec{arg: "St", long: []string{"suffix", "target-directory"}}),
		"rm":       hRemove,
		"unlink":   hRemove,
		"rmdir":    hRemove,
		"shred":    hShred,
		"truncate": hSimple(Truncate, optSpec{arg: "sr", long: []string{"size", "reference"}}),
		"touch":    hSimple(Touch, optSpec{arg: "drt", long: []string{"date", "reference", "time"}}),
		"mkdir":    hSimple(Mkdir, optSpec{arg: "m", long: []string{"mode", "context"}}),
		"mkfifo":   hSimple(Mkdir, optSpec{arg: "m", long: []string{"mode", "context"}}),
		"chmod":    hChmod,
		"chown":    hChmod,
		"chgrp":    hChmod,
		"dd":       hDd,
		"sponge":   hSponge,
		"sort":     hOutOpt(optSpec{arg: "oktTS", long: []string{"output", "key", "field-separator", "temporary-directory", "buffer-size", "batch-size", "files0-from", "compress-program", "parallel", "random-source", "sort"}}, "o", "output"),
		"curl":     hOutOpt(optSpec{arg: "oDcdHXuTAbeEKmrwxyYzUQFCt", long: []string{"output", "dump-header", "cookie-jar", "data", "header", "request", "user", "upload-file", "user-agent", "cookie", "referer", "cert", "config", "max-time", "range", "write-out", "proxy", "form", "continue-at", "stderr", "trace", "trace-ascii", "output-dir"}}, "o", "output", "D", "dump-header", "c", "cookie-jar", "stderr", "trace", "trace-ascii"),
		"wget":     hOutOpt(optSpec{arg: "OoaPeiBtTwUlQDARXIY", long: []string{"output-document", "output-file", "append-output", "directory-prefix"}}, "O", "output-document", "o", "output-file", "a", "append-output"),
		"uniq":     hUniq,
		"tar":      hTar,
		"unzip":    hUnzip,
		"zip":      hZip,
		"patch":    hPatch,
		"gzip":     hCompress, "gunzip": hCompress, "bzip2": hCompress, "bunzip2": hCompress,
		"xz": hCompress, "unxz": hCompress, "lzma": hCompress, "zstd": hZstd,
		"yq":  hYq,
		"git": hGit,
		"go":  hGo,
		"awk": hAwk, "gawk": hAwk, "mawk": hAwk, "nawk": hAwk,
		"perl": hPerlRuby, "ruby": hPerlRuby,
		"sudoedit": hEditor, "ed": hEditor, "ex": hEditor, "vi": hEditor, "vim": hEditor,
		"nvim": hEditor, "nano": hEditor, "emacs": hEditor,
		"gofmt":        hFormatter("w", "w"),
		"goimports":    hFormatter("w", "w"),
		"shfmt":        hFormatter("w", "w", "write"),
		"prettier":     hFormatter("w", "w", "write"),
		"clang-format": hFormatter("i", "i"),
		"autopep8":     hFormatter("i", "i", "in-place"),
		"eslint":       hFormatter("fix", "fix"),
		"black":        hFormatterUnless("check", "diff"),
		"isort":        hFormatterUnless("check", "check-only", "diff", "c"),
		"rustfmt":      hFormatterUnless("check"),
		"ruff":         hRuff,
	}
}

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

// --- shell state ---

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

// --- file writers ---

func hTee(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{})
	kind := Tee
	if p.has("a", "append") {
		kind = Append
	}
	for _, f := range p.pos {
		a.write(c.st, f, kind, c.op, false)
	}
	return c.same()
}

func hSed(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "efl", optArg: "i", long: []string{"expression", "file", "line-length"}})
	scripts := p.vals("e", "expression")
	files := p.pos
	if len(scripts) == 0 && len(p.vals("f", "file")) == 0 && len(files) > 0 {
		scripts, files = files[:1], files[1:]
	}
	if p.has("i", "in-place") {
		for _, f := range files {
			a.write(c.st, f, InPlace, c.op, false)
		}
	}
	for _, s := range scripts {
		for _, f := range sedWriteFiles(s.text) {
			a.write(c.st, lit(f), Output, c.op, false)
		}
	}
	return c.same()
}

// sedWriteFiles finds the files named by sed's w/W commands and s///w flags.
// It over-reports rather than parse sed fully.
func sedWriteFiles(script string) []string {
	var out []string
	for i := 0; i < len(script); i++ {
		ch := script[i]
		if ch != 'w' && ch != 'W' {
			continue
		}
		// The w must start a command or end an s command's flags.
		j := i - 1
		for j >= 0 && (script[j] == ' ' || script[j] == '\t') {
			j--
		}
		ok := j < 0 || strings.IndexByte(";\n{}!", script[j]) >= 0 || isAddrEnd(script, j)
		if !ok {
			k := j
			for k >= 0 && strings.IndexByte("gpIiMme0123456789", script[k]) >= 0 {
				k--
			}
			ok = k >= 0 && k < i-1 && script[k] == '/' || k >= 0 && script[k] == '/' && k == j
		}
		if !ok || i+1 >= len(script) || (script[i+1] != ' ' && script[i+1] != '\t') {
			continue
		}
		rest := strings.TrimLeft(script[i+1:], " \t")
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[:nl]
		}
		if rest != "" {
			out = append(out, rest)
		}
	}
	return out
}

// isAddrEnd reports whether script[j] ends a sed address (a line number,
// "$" or a /regex/), after which a command letter may follow.
func isAddrEnd(script string, j int) bool {
	c := script[j]
	return c == '$' || (c >= '0' && c <= '9')
}

// hCopy handles cp, mv and ln: sources then a destination, or -t DIR.
func hCopy(kind WriteKind, sp optSpec) handler {
	return func(a *analyzer, c *ctx, args []field) res {
		p := parseArgs(args, sp)
		tree := kind == MoveTarget || p.has("r", "R", "a", "recursive", "archive")
		a.copyLike(c, p, kind, tree)
		if kind == Link || kind == CopyTarget && p.has("l", "link", "s", "symbolic-link") {
			a.linkSources(c, p)
		}
		return c.same()
	}
}

// linkSources reports what new links point at: a link to a file is another
// name for it, through which it can be written later. A symbolic link's
// target is relative to the link's directory, so sources are resolved
// against both the working directory and that directory.
func (a *analyzer) linkSources(c *ctx, p parsed) {
	dirs := p.vals("t", "target-directory")
	srcs := p.pos
	dest := lit(".")
	switch {
	case len(dirs) > 0:
		dest = dirs[len(dirs)-1]
	case len(srcs) >= 2:
		dest, srcs = srcs[len(srcs)-1], srcs[:len(srcs)-1]
		if len(srcs) == 1 && !strings.HasSuffix(dest.text, "/") {
			dest = field{text: path.Dir(dest.text), pat: path.Dir(dest.pat), dyn: dest.dyn}
		}
	}
	for _, s := range srcs {
		a.write(c.st, s, LinkSource, c.op, false)
		if !s.isAbs() && !s.floating() {
			a.write(c.st, joinPath(dest, s), LinkSource, c.op, false)
		}
	}
}

func (a *analyzer) copyLike(c *ctx, p parsed, kind WriteKind, tree bool) {
	dirs := p.vals("t", "target-directory")
	srcs := p.pos
	var dest field
	switch {
	case len(dirs) > 0:
		dest = dirs[len(dirs)-1]
	case len(srcs) >= 2:
		dest, srcs = srcs[len(srcs)-1], srcs[:len(srcs)-1]
	case len(srcs) == 1 && kind == Link:
		// "ln -s TARGET" creates ./basename(TARGET).
		dest = lit(".")
	default:
		return
	}
	if kind == MoveTarget {
		for _, s := range srcs {
			a.write(c.st, s, MoveSource, c.op, true)
		}
	}
	if p.has("T", "no-target-directory") && len(dirs) == 0 {
		a.write(c.st, dest, kind, c.op, tree)
		return
	}
	isDir := len(dirs) > 0 || len(srcs) > 1 || strings.HasSuffix(dest.text, "/") ||
		dest.text == "." || dest.text == ".." || strings.HasSuffix(dest.text, "/.") || strings.HasSuffix(dest.text, "/..")
	if !isDir {
		// Without looking at the disk the destination may be a file or an
		// existing directory; report both readings.
		a.write(c.st, dest, kind, c.op, tree)
	}
	for _, s := range srcs {
		a.write(c.st, joinPath(dest, baseField(s)), kind, c.op, tree)
	}
}

func hInstall(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "gmoSt", long: []string{"group", "mode", "owner", "suffix", "target-directory", "strip-program", "context"}})
	if p.has("d", "directory") {
		for _, f := range p.pos {
			a.write(c.st, f, Mkdir, c.op, false)
		}
		return c.same()
	}
	a.copyLike(c, p, CopyTarget, false)
	return c.same()
}

func hRsync(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "efBTM", long: []string{
		"rsh", "exclude", "include", "filter", "exclude-from", "include-from", "files-from",
		"temp-dir", "backup-dir", "suffix", "chmod", "rsync-path", "out-format", "log-file",
		"log-file-format", "compare-dest", "link-dest", "copy-dest", "partial-dir", "password-file",
		"max-size", "min-size", "timeout", "contimeout", "bwlimit", "port", "sockopts", "iconv", "chown",
		"usermap", "groupmap", "info", "debug", "outbuf", "modify-window", "block-size", "max-delete",
		"skip-compress", "address", "protocol", "checksum-choice", "compress-choice", "compress-level",
		"stop-after", "stop-at", "only-write-batch", "write-batch", "read-batch", "remote-option",
	}})
	for _, f := range p.vals("log-file", "write-batch", "only-write-batch") {
		a.write(c.st, f, Output, c.op, false)
	}
	if len(p.pos) < 2 {
		return c.same()
	}
	dest := p.pos[len(p.pos)-1]
	if isRemote(dest.text) {
		return c.same()
	}
	a.write(c.st, dest, CopyTarget, c.op, true)
	return c.same()
}

func isRemote(s string) bool {
	i := strings.IndexByte(s, ':')
	return i > 0 && !strings.Contains(s[:i], "/")
}

func hRemove(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{})
	tree := p.has("r", "R", "recursive")
	for _, f := range p.pos {
		a.write(c.st, f, Remove, c.op, tree)
	}
	return c.same()
}

func hShred(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "nsx", long: []string{"iterations", "size", "random-source", "remove"}})
	for _, f := range p.pos {
		a.write(c.st, f, Remove, c.op, false)
	}
	return c.same()
}

func hSimple(kind WriteKind, sp optSpec) handler {
	return func(a *analyzer, c *ctx, args []field) res {
		for _, f := range parseArgs(args, sp).pos {
			a.write(c.st, f, kind, c.op, false)
		}
		return c.same()
	}
}

func hChmod(a *analyzer, c *ctx, args []field) res {
	// A mode such as -w or -x looks like an option but is an operand.
	var words []field
	for _, f := range args {
		if len(f.text) > 1 && f.text[0] == '-' && strings.Trim(f.text[1:], "rwxXstugoa") == "" && !strings.ContainsAny(f.text[1:], "R") {
			words = append(words, field{text: "=" + f.text, pat: "=" + f.text})
			continue
		}
		words = append(words, f)
	}
	p := parseArgs(words, optSpec{long: []string{"reference", "from"}})
	files := p.pos
	if _, ok := p.opt("reference"); !ok && len(files) > 0 {
		files = files[1:]
	}
	tree := p.has("R", "recursive")
	for _, f := range files {
		a.write(c.st, f, Chmod, c.op, tree)
	}
	return c.same()
}

func hDd(a *analyzer, c *ctx, args []field) res {
	for _, f := range args {
		if strings.HasPrefix(f.text, "of=") {
			a.write(c.st, sub(f, 3), Output, c.op, false)
		}
	}
	return c.same()
}

func hSponge(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{})
	kind := Output
	if p.has("a") {
		kind = Append
	}
	for _, f := range p.pos {
		a.write(c.st, f, kind, c.op, false)
	}
	return c.same()
}

// hOutOpt handles programs that write the file given to one of names.
func hOutOpt(sp optSpec, names ...string) handler {
	return func(a *analyzer, c *ctx, args []field) res {
		p := parseArgs(args, sp)
		for _, o := range p.opts {
			if o.hasVal && optIs(o.name, names) && o.val.text != "-" {
				a.write(c.st, o.val, Output, c.op, false)
			}
		}
		return c.same()
	}
}

func hUniq(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars", "group", "all-repeated"}})
	if len(p.pos) >= 2 {
		a.write(c.st, p.pos[1], Output, c.op, false)
	}
	return c.same()
}

func hTar(a *analyzer, c *ctx, args []field) res {
	// Old-style "tar xzf FILE": the first word is a bundle of letters.
	if len(args) > 0 && !args[0].dyn && args[0].text != "" && args[0].text[0] != '-' {
		args = append([]field{lit("-" + args[0].text)}, args[1:]...)
	}
	p := parseArgs(args, optSpec{arg: "fCbHKLNTVXg", long: []string{"file", "directory", "blocking-factor", "format", "starting-file", "tape-length", "newer", "files-from", "label", "exclude-from", "listed-incremental", "exclude", "transform", "xform", "use-compress-program", "owner", "group", "mode", "mtime", "to-command", "checkpoint-action", "index-file"}})
	switch {
	case p.has("x", "extract", "get"):
		dir := lit(".")
		if ds := p.vals("C", "directory"); len(ds) > 0 {
			dir = ds[len(ds)-1]
		}
		a.write(c.st, dir, Extract, c.op, true)
	case p.has("c", "create", "r", "append", "u", "update", "A", "catenate", "concatenate", "delete"):
		for _, f := range p.vals("f", "file") {
			if f.text != "-" {
				a.write(c.st, f, Output, c.op, false)
			}
		}
		if p.has("remove-files") {
			// The archived files are deleted; -C changes where the names
			// after it are looked up, so each is taken from both places.
			dirs := append([]*ctx{c}, chdirEach(c, p.vals("C", "directory"))...)
			for _, f := range p.pos {
				for _, cc := range dirs {
					a.write(cc.st, f, Remove, c.op, true)
				}
			}
		}
	}
	return c.same()
}

func chdirEach(c *ctx, dirs []field) []*ctx {
	var out []*ctx
	for _, d := range dirs {
		out = append(out, c.chdir(d))
	}
	return out
}

// hZip handles zip: the archive is written, and with -m (--move) the files
// put in it are deleted.
func hZip(a *analyzer, c *ctx, args []field) res {
	// Lists after -x/-i are patterns, not files to add.
	for i, f := range args {
		if t := f.text; t == "-x" || t == "-i" || t == "--exclude" || t == "--include" {
			args = args[:i]
			break
		}
	}
	p := parseArgs(args, optSpec{arg: "bnPtZOsUK", long: []string{"temp-path", "suffixes", "password", "from-date", "before-date", "compression-method", "output-file", "split-size", "unicode", "logfile-path"}})
	for _, f := range p.vals("O", "output-file", "logfile-path") {
		a.write(c.st, f, Output, c.op, false)
	}
	if len(p.pos) == 0 {
		return c.same()
	}
	if len(p.vals("O", "output-file")) == 0 {
		a.write(c.st, p.pos[0], Output, c.op, false)
	}
	if p.has("m", "move") {
		for _, f := range p.pos[1:] {
			a.write(c.st, f, Remove, c.op, p.has("r", "recurse-paths"))
		}
	}
	return c.same()
}

func hUnzip(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "dxP"})
	if p.has("l", "t", "v", "p", "Z", "z") {
		return c.same()
	}
	dir := lit(".")
	if ds := p.vals("d"); len(ds) > 0 {
		dir = ds[len(ds)-1]
	}
	a.write(c.st, dir, Extract, c.op, true)
	return c.same()
}

func hPatch(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "pidoBrDzFVYg", long: []string{"strip", "input", "directory", "output", "prefix", "reject-file", "ifdef", "suffix", "fuzz", "version-control", "basename-prefix", "get", "quoting-style", "reject-format"}})
	if p.has("dry-run", "C") {
		return c.same()
	}
	cc := c
	for _, d := range p.vals("d", "directory") {
		cc = cc.chdir(d)
	}
	for _, f := range p.vals("o", "output") {
		a.write(cc.st, f, Output, c.op, false)
	}
	if len(p.pos) > 0 {
		a.write(cc.st, p.pos[0], InPlace, c.op, false)
	} else {
		// The files are named inside the patch.
		a.write(cc.st, lit("."), InPlace, c.op, true)
	}
	return c.same()
}

func hCompress(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "S", long: []string{"suffix"}})
	if p.has("c", "stdout", "to-stdout", "k", "keep", "t", "test", "l", "list") {
		return c.same()
	}
	for _, f := range p.pos {
		a.write(c.st, f, Remove, c.op, false)
	}
	return c.same()
}

func hZstd(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "oD", long: []string{"output", "dict"}})
	for _, f := range p.vals("o", "output") {
		a.write(c.st, f, Output, c.op, false)
	}
	if p.has("rm") {
		return hCompress(a, c, args)
	}
	return c.same() // zstd keeps its input unless --rm
}

func hYq(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "oIpd", long: []string{"output-format", "input-format", "indent", "expression", "front-matter", "from-file", "split-exp", "lua-prefix", "lua-suffix", "properties-separator", "csv-separator", "xml-attribute-prefix", "xml-content-name"}})
	if !p.has("i", "inplace") {
		return c.same()
	}
	files := p.pos
	if len(p.vals("expression", "from-file")) == 0 && len(files) > 1 {
		files = files[1:]
	}
	if len(files) > 0 && files[0].text == "eval" || len(files) > 0 && files[0].text == "e" {
		files = files[1:]
		if len(files) > 1 {
			files = files[1:]
		}
	}
	for _, f := range files {
		a.write(c.st, f, InPlace, c.op, false)
	}
	return c.same()
}

func hEditor(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "cSuiTwWsr"})
	for _, f := range p.pos {
		if strings.HasPrefix(f.text, "+") {
			continue
		}
		a.write(c.st, f, InPlace, c.op, false)
	}
	for _, f := range p.vals("w", "W") {
		a.write(c.st, f, Output, c.op, false)
	}
	return c.same()
}

// hFormatter is for formatters that rewrite their operands when given one
// of flags (gofmt -w, prettier --write, …).
func hFormatter(short string, flags ...string) handler {
	return func(a *analyzer, c *ctx, args []field) res {
		p := parseArgs(args, optSpec{})
		if !p.has(flags...) && !hasExact(args, "-"+short) {
			return c.same()
		}
		for _, f := range p.pos {
			a.write(c.st, f, InPlace, c.op, true)
		}
		return c.same()
	}
}

func hasExact(args []field, w string) bool {
	for _, f := range args {
		if f.text == w {
			return true
		}
	}
	return false
}

// hFormatterUnless is for formatters that rewrite their operands unless told
// only to check.
func hFormatterUnless(flags ...string) handler {
	return func(a *analyzer, c *ctx, args []field) res {
		p := parseArgs(args, optSpec{long: []string{"config", "line-length", "target-version", "settings-path", "edition", "emit", "color", "include", "exclude", "extend-exclude", "force-exclude", "profile"}})
		if p.has(flags...) {
			return c.same()
		}
		for _, f := range p.pos {
			a.write(c.st, f, InPlace, c.op, true)
		}
		return c.same()
	}
}

func hRuff(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{long: []string{"config", "line-length", "target-version", "select", "ignore", "extend-select", "exclude", "extend-exclude", "output-format"}})
	if len(p.pos) == 0 {
		return c.same()
	}
	switch p.pos[0].text {
	case "format":
		if p.has("check", "diff") {
			return c.same()
		}
	case "check":
		if !p.has("fix") {
			return c.same()
		}
	default:
		return c.same()
	}
	files := p.pos[1:]
	if len(files) == 0 {
		files = []field{lit(".")}
	}
	for _, f := range files {
		a.write(c.st, f, InPlace, c.op, true)
	}
	return c.same()
}

// --- programs that run other commands ---

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
