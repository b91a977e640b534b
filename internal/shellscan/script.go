package shellscan

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// interpreter names the language family of a program that runs code given
// on its command line, or "" if base is not one.
func interpreter(base string) string {
	switch {
	case strings.HasPrefix(base, "python"), strings.HasPrefix(base, "pypy"):
		if strings.Trim(strings.TrimPrefix(strings.TrimPrefix(base, "python"), "pypy"), "0123456789.") == "" {
			return "python"
		}
	case base == "node", base == "nodejs", base == "bun":
		return "node"
	case base == "deno":
		return "deno"
	case base == "php", base == "lua", base == "luajit", base == "Rscript", base == "osascript":
		return "e" // single-letter code flag: php -r, lua -e, Rscript -e
	}
	return ""
}

// interp finds the code a python/node/… command runs from its arguments or
// stdin and scans it for file writes.
func (a *analyzer) interp(c *ctx, kind string, args []field) {
	var codes []string
	var operands []field // what the code gets as its arguments (sys.argv[1:], …)
	script := false
	switch kind {
	case "python":
	loop:
		for i := 0; i < len(args); i++ {
			t := args[i].text
			switch {
			case t == "-":
				operands = args[i+1:]
				break loop
			case len(t) > 1 && t[0] == '-' && t[1] != '-':
				for j := 1; j < len(t); j++ {
					switch t[j] {
					case 'c':
						if j+1 < len(t) {
							codes = append(codes, t[j+1:])
							operands = args[i+1:]
						} else if i+1 < len(args) {
							codes = append(codes, args[i+1].text)
							operands = args[i+2:]
						}
						break loop
					case 'm':
						script = true
						break loop
					case 'W', 'X', 'Q':
						if j+1 == len(t) {
							i++
						}
						j = len(t)
					}
				}
			case strings.HasPrefix(t, "--"):
			default:
				script = true
				break loop
			}
		}
	case "node":
		for i := 0; i < len(args); i++ {
			t := args[i].text
			switch {
			case t == "-e" || t == "--eval" || t == "-p" || t == "--print" || t == "-pe":
				if i+1 < len(args) {
					codes = append(codes, args[i+1].text)
					i++
				}
			case strings.HasPrefix(t, "--eval=") || strings.HasPrefix(t, "--print="):
				_, v, _ := strings.Cut(t, "=")
				codes = append(codes, v)
			case t == "-r" || t == "--require" || t == "--import" || t == "--loader":
				i++
			case strings.HasPrefix(t, "-"):
			default:
				if len(codes) == 0 {
					script = true
				} else {
					operands = args[i:]
				}
				i = len(args)
			}
		}
	case "deno":
		if len(args) > 1 && args[0].text == "eval" {
			codes = append(codes, args[len(args)-1].text)
		} else if len(args) > 0 {
			script = true
		}
	case "e":
		for i := 0; i+1 < len(args); i++ {
			if t := args[i].text; t == "-e" || t == "-r" {
				codes = append(codes, args[i+1].text)
				i++
				operands = args[i+1:]
			}
		}
		if len(codes) == 0 && len(args) > 0 {
			script = true
		}
	}
	if len(codes) == 0 && !script && c.stdin != nil {
		codes = append(codes, *c.stdin)
	}
	for _, code := range codes {
		a.code(c, code, false, operands)
	}
}

func hPerlRuby(a *analyzer, c *ctx, args []field) res {
	var codes []string
	var files []field
	inPlace, script := false, false
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if t == "--" || t == "-" && len(codes) == 0 && !script {
			files = append(files, args[i+1:]...)
			break
		}
		if len(t) > 1 && t[0] == '-' && !args[i].dyn && !script {
			if strings.HasPrefix(t, "--") {
				continue
			}
			for j := 1; j < len(t); j++ {
				switch t[j] {
				case 'e', 'E':
					if j+1 < len(t) {
						codes = append(codes, t[j+1:])
					} else if i+1 < len(args) {
						i++
						codes = append(codes, args[i].text)
					}
					j = len(t)
				case 'i':
					inPlace = true
					j = len(t)
				case 'I', 'r', 'C':
					if j+1 == len(t) && i+1 < len(args) {
						i++
					}
					j = len(t)
				case 'M', 'm', 'l', '0', 'F', 'x', 'd', 'D', 'T', 'K', 'W':
					j = len(t)
				}
			}
			continue
		}
		if len(codes) == 0 && !script {
			script = true // the program file; the rest are its operands
			continue
		}
		files = append(files, args[i])
	}
	if inPlace {
		for _, f := range files {
			a.write(c.st, f, InPlace, c.op, false)
		}
	}
	if len(codes) == 0 && !script && c.stdin != nil {
		codes = append(codes, *c.stdin)
	}
	for _, code := range codes {
		a.code(c, code, false, files)
	}
	return c.same()
}

func hAwk(a *analyzer, c *ctx, args []field) res {
	p := parseArgs(args, optSpec{arg: "fvFiEW", long: []string{"file", "assign", "field-separator", "include", "exec", "source", "load"}})
	inPlace := false
	for _, f := range p.vals("i", "include") {
		if strings.TrimSuffix(f.text, ".awk") == "inplace" {
			inPlace = true
		}
	}
	files := p.pos
	progs := p.vals("source")
	if len(p.vals("f", "file", "E", "exec")) == 0 && len(files) > 0 {
		progs, files = append(progs, files[0]), files[1:]
	}
	if inPlace {
		for _, f := range files {
			if !strings.Contains(f.text, "=") {
				a.write(c.st, f, InPlace, c.op, false)
			}
		}
	}
	for _, prog := range progs {
		a.code(c, prog.text, true, files)
	}
	return c.same()
}

// writeMarkers are substrings that suggest code writes, deletes or runs
// something. Code without any is taken to only read.
var writeMarkers = []string{
	"write", "Write", "appendFile", "unlink", "remove", "Remove", "rename", "os.replace",
	"rmtree", "rmdir", "rmSync", "rm_rf", "rm_r", "rm(", "truncate", "system", "subprocess", "popen",
	"Popen", "exec", "spawn", "copy", "move", "chmod", "chown", "symlink", "link(", "mkdir", "touch",
	"dump(", "save", "to_csv", "to_json", "`", "qx", "%x", "delete(", "FileUtils",
}

// weakMarkers open files; they only count with a write mode ("w", "a+", …).
var weakMarkers = []string{"open(", "open ", "File.", "IO.", "fopen"}

// withoutConsoleWrites is code without its writes to the terminal, common
// in read-only one-liners (the replacer made at the call: a package
// variable would be built at every hook's start, for the few that read a
// script).
func withoutConsoleWrites(code string) string {
	return strings.NewReplacer("stdout.write", "", "stderr.write", "", "$stdout.write", "", "STDOUT.write", "").Replace(code)
}

// code scans code run by an interpreter. When it looks like it writes, every
// string literal that looks like a path is reported as a ScriptRewrite, and
// so is every argument the code is given (operands: sys.argv, process.argv,
// @ARGV, …, which it may open, rewrite or remove); literals that look like
// shell commands (os.system("rm x")) are analysed as shell. Names built at
// run time are not seen; Mentions still has the code.
func (a *analyzer) code(c *ctx, code string, awk bool, operands []field) {
	a.mention(code)
	a.nodes += len(code) / 64
	if a.budget() {
		return
	}
	scan := withoutConsoleWrites(code)
	writes := containsAny(scan, writeMarkers...) || awk && strings.ContainsAny(code, ">|")
	if !writes && containsAny(scan, weakMarkers...) {
		writes = hasWriteMode(code)
	}
	if !writes {
		return
	}
	tree := containsAny(code, "rmtree", "rm_rf", "rmSync", "recursive")
	// awk reads its operands as input; it writes one only by naming it.
	if !awk || containsAny(code, "FILENAME", "ARGV") {
		for _, f := range operands {
			a.write(c.st, f, ScriptRewrite, c.op, tree)
		}
	}
	for _, s := range stringLiterals(code) {
		if _, rest, ok := perlOpen(s); ok {
			s = rest // open(F, ">file"): the name after the mode
		}
		switch {
		case strings.ContainsAny(s, " \t") && !strings.ContainsAny(s, "\n"):
			if looksLikeCommand(s) {
				a.script(s, c.st.clone(), syntax.LangBash, true)
			}
		case looksLikePath(s):
			a.write(c.st, lit(s), ScriptRewrite, c.op, tree)
		}
	}
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func hasWriteMode(code string) bool {
	for _, s := range stringLiterals(code) {
		if isOpenMode(s) && strings.ContainsAny(s, "wax+") {
			return true
		}
		if write, _, ok := perlOpen(s); ok && write {
			return true
		}
	}
	return false
}

// perlOpen splits a Perl open mode off a string (">file", "+<file", ">>",
// ">:utf8"): whether the mode writes, and the rest.
func perlOpen(s string) (write bool, rest string, ok bool) {
	t := strings.TrimLeft(s, " \t")
	for _, m := range []string{"+>>", "+<", "+>", ">>", ">", "<"} {
		if strings.HasPrefix(t, m) {
			rest = strings.TrimLeft(t[len(m):], " \t")
			if strings.HasPrefix(rest, "&") || strings.HasPrefix(rest, "=") {
				return false, "", false // a dup of a handle, or a comparison
			}
			if strings.HasPrefix(rest, ":") {
				rest = "" // ">:utf8": a layer, the name comes in another argument
			}
			return m != "<", rest, true
		}
	}
	return false, "", false
}

func isOpenMode(s string) bool {
	return s != "" && len(s) <= 3 && strings.Trim(s, "rwabxt+") == ""
}

// looksLikeCommand keeps prose and format strings out of the shell parser.
func looksLikeCommand(s string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	if first == "" || strings.ContainsAny(first, "%{}()") {
		return false
	}
	if _, ok := handlerFor(baseName(first)); ok {
		return true
	}
	return interpreter(baseName(first)) != ""
}

func looksLikePath(s string) bool {
	if s == "" || len(s) > 4096 || strings.ContainsAny(s, "\n\r\t %{}<>|*") || isOpenMode(s) {
		return false
	}
	switch strings.ToLower(s) {
	case "utf-8", "utf8", "ascii", "latin-1", "latin1", "utf-16":
		return false
	}
	if strings.Trim(s, "0123456789.") == "" {
		return false
	}
	return strings.ContainsAny(s, "./") || strings.HasPrefix(s, "~")
}

// stringLiterals returns the contents of the '…', "…" and `…` literals in
// code, with backslash escapes undone. It is language-agnostic on purpose.
func stringLiterals(code string) []string {
	var out []string
	for i := 0; i < len(code); i++ {
		q := code[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(code) && code[j] != q; j++ {
			if code[j] == '\\' && j+1 < len(code) {
				j++
			}
			b.WriteByte(code[j])
		}
		if j >= len(code) {
			break
		}
		out = append(out, b.String())
		i = j
		if len(out) > 256 {
			break
		}
	}
	return out
}
