package shellscan

import (
	"path"
	"sync"

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

// handlers are the commands the analyser knows, by name. The table is
// made the first time a command is looked up (handlerFor), not when the
// package is initialised: every hook links it, and most calls (a Read, an
// inactive project, the check after a call) never analyse a command.
var (
	handlers     map[string]handler
	handlersOnce sync.Once
)

// handlerFor is the handler of the command named name.
func handlerFor(name string) (handler, bool) {
	handlersOnce.Do(makeHandlers)
	h, ok := handlers[name]
	return h, ok
}

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
	if h, ok := handlerFor(base); ok {
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

func makeHandlers() {
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
