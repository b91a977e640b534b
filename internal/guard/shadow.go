package guard

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/harness-agent/harness/internal/shadow"
	"github.com/harness-agent/harness/internal/shellscan"
)

// shadowSave records the work tree in the project's shadow history before a
// call that may change it (internal/shadow), so a person can undo what the
// call does (`harness undo`). Read-only calls cost nothing: no git runs.
func (c *call) shadowSave() {
	msg := ""
	switch c.tool {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		path := c.p.Str("tool_input.file_path")
		if c.tool == "NotebookEdit" {
			path = c.p.Str("tool_input.notebook_path")
		}
		if t := c.abs(path); t != c.Root && !strings.HasPrefix(t, c.Root+"/") || c.harnessName(t) != "" {
			// A file outside the project, or a harness file, which the
			// checkpoints never hold (and whose edit may have spent the
			// hook's time on the completion gate already).
			return
		}
		msg = c.tool + ": " + path
	case "Bash":
		cmd := c.p.Str("tool_input.command")
		if strings.TrimSpace(cmd) == "" {
			return
		}
		if c.rep == nil {
			rep := shellscan.Analyze(cmd, c.cwd)
			c.rep = &rep
		}
		if readOnly(*c.rep, c.Root) {
			return
		}
		msg = "Bash: " + cmd
	default:
		return
	}
	shadow.Save(c.Root, msg) // best effort: a failure is kept for `harness undo --list`
}

// readOnly reports whether the guard's analysis shows that a Bash command
// cannot change the files under the state root dir: it parses whole, writes
// nothing there, and runs only programs that read (any other program may
// write anything: a build, a test, a script).
func readOnly(rep shellscan.Report, dir string) bool {
	if rep.ParseError != nil || rep.Incomplete {
		return false
	}
	for _, w := range rep.Writes {
		if w.Dynamic || !filepath.IsAbs(w.Path) {
			return false
		}
		p := resolve(w.Path)
		if p == dir || strings.HasPrefix(p, dir+"/") || w.Touches(dir) {
			return false
		}
	}
	for _, p := range rep.Programs {
		if p.Dynamic || strings.Contains(p.Name, "/") || !readingProgram(p) {
			return false
		}
	}
	return true
}

// reader reports whether a program only reads files (its writes, such as
// `sort -o` or `sed -i`, are reported by the analysis as writes), or is a
// shell builtin or a wrapper whose commands the analysis lists apart.
func reader(name string) bool {
	switch name {
	case "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "find", "fd",
		"tree", "stat", "file", "du", "df", "pwd", "echo", "printf", "true", "false", "test", "[", "cd",
		"which", "type", "whoami", "id", "date", "uname", "hostname", "env", "printenv", "basename",
		"dirname", "realpath", "readlink", "diff", "cmp", "comm", "sort", "uniq", "cut", "tr", "nl",
		"column", "jq", "sed", "awk", "gawk", "mawk", "od", "xxd", "hexdump", "md5sum", "sha1sum",
		"sha256sum", "cksum", "strings", "sleep", "seq", "expr", "tac", "rev", "fold", "paste", "join",
		"ps", "pgrep", "nproc", "free", "uptime", "xargs", "timeout", "time", "nice", "command",
		"export", "set", "unset", "local", "read", "exit", "return", ":", "less", "more":
		return true
	}
	return false
}

// gitReader reports whether a git subcommand leaves the work tree's files
// as they are.
func gitReader(name string) bool {
	switch name {
	case "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "grep",
		"describe", "cat-file", "shortlog", "rev-list", "merge-base", "name-rev", "for-each-ref",
		"show-ref", "version", "help":
		return true
	}
	return false
}

// goReader reports whether a go subcommand leaves the project's files as
// they are.
func goReader(name string) bool {
	switch name {
	case "version", "env", "list", "doc", "vet", "help":
		return true
	}
	return false
}

// harnessReader reports whether a harness verb changes no project file (the
// state files are not in the shadow history).
func harnessReader(name string) bool {
	switch name {
	case "status", "next", "claim", "checkpoint", "add", "graph", "history", "snapshots", "help",
		"version", "budget", "renew":
		return true
	}
	return false
}

func readingProgram(p shellscan.Program) bool {
	switch p.Name {
	case "git":
		for _, a := range p.Args {
			if strings.HasPrefix(a, "--output") {
				return false
			}
		}
		return len(p.Args) > 0 && gitReader(p.Args[0])
	case "harness":
		return len(p.Args) > 0 && harnessReader(p.Args[0])
	case "go":
		// go vet and go list write only the build cache, outside the
		// project; go test may rewrite golden files, go generate anything.
		if len(p.Args) == 0 || p.Args[0] == "env" && slices.Contains(p.Args, "-w") {
			return false
		}
		return goReader(p.Args[0])
	case "awk", "gawk", "mawk":
		// awk's own redirections and commands (print > "f", "cmd" |
		// getline, system()) are not all reported as writes.
		for _, a := range p.Args {
			if strings.ContainsAny(a, ">|") || strings.Contains(a, "system") {
				return false
			}
		}
	}
	return reader(p.Name)
}
