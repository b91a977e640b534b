package shellscan

import (
	"path"
	"strings"
)

// Programs that write files: what each writes, read from its arguments.

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
