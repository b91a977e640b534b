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

// readers are programs that only read files (their writes, such as
// `sort -o` or `sed -i`, are reported by the analysis as writes), and
// shell builtins and wrappers whose commands the analysis lists apart.
var readers = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "grep": true, "egrep": true, "fgrep": true,
	"rg": true, "ag": true, "find": true, "fd": true, "tree": true, "stat": true, "file": true, "du": true, "df": true,
	"pwd": true, "echo": true, "printf": true, "true": true, "false": true, "test": true, "[": true, "cd": true,
	"which": true, "type": true, "whoami": true, "id": true, "date": true, "uname": true, "hostname": true,
	"env": true, "printenv": true, "basename": true, "dirname": true, "realpath": true, "readlink": true,
	"diff": true, "cmp": true, "comm": true, "sort": true, "uniq": true, "cut": true, "tr": true, "nl": true,
	"column": true, "jq": true, "sed": true, "awk": true, "gawk": true, "mawk": true, "od": true, "xxd": true,
	"hexdump": true, "md5sum": true, "sha1sum": true, "sha256sum": true, "cksum": true, "strings": true,
	"sleep": true, "seq": true, "expr": true, "tac": true, "rev": true, "fold": true, "paste": true, "join": true,
	"ps": true, "pgrep": true, "nproc": true, "free": true, "uptime": true, "xargs": true, "timeout": true,
	"time": true, "nice": true, "command": true, "export": true, "set": true, "unset": true, "local": true,
	"read": true, "exit": true, "return": true, ":": true, "less": true, "more": true,
}

// gitReaders are the git subcommands that leave the work tree's files as
// they are.
var gitReaders = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "rev-parse": true, "ls-files": true, "ls-tree": true,
	"blame": true, "grep": true, "describe": true, "cat-file": true, "shortlog": true, "rev-list": true,
	"merge-base": true, "name-rev": true, "for-each-ref": true, "show-ref": true, "version": true, "help": true,
}

// goReaders are the go subcommands that leave the project's files as they
// are.
var goReaders = map[string]bool{"version": true, "env": true, "list": true, "doc": true, "vet": true, "help": true}

// harnessReaders are the harness verbs that change no project file (the
// state files are not in the shadow history).
var harnessReaders = map[string]bool{
	"status": true, "next": true, "claim": true, "checkpoint": true, "add": true, "graph": true, "history": true,
	"snapshots": true, "help": true, "version": true, "budget": true, "renew": true,
}

func readingProgram(p shellscan.Program) bool {
	switch p.Name {
	case "git":
		for _, a := range p.Args {
			if strings.HasPrefix(a, "--output") {
				return false
			}
		}
		return len(p.Args) > 0 && gitReaders[p.Args[0]]
	case "harness":
		return len(p.Args) > 0 && harnessReaders[p.Args[0]]
	case "go":
		// go vet and go list write only the build cache, outside the
		// project; go test may rewrite golden files, go generate anything.
		if len(p.Args) == 0 || p.Args[0] == "env" && slices.Contains(p.Args, "-w") {
			return false
		}
		return goReaders[p.Args[0]]
	case "awk", "gawk", "mawk":
		// awk's own redirections and commands (print > "f", "cmd" |
		// getline, system()) are not all reported as writes.
		for _, a := range p.Args {
			if strings.ContainsAny(a, ">|") || strings.Contains(a, "system") {
				return false
			}
		}
	}
	return readers[p.Name]
}
