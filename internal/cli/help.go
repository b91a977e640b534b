package cli

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/harness-agent/harness/internal/failure"
)

// unknownVerb refuses a name that is no verb, from `harness NAME` and
// `harness help NAME` alike, with the nearest verb when one is close.
func (e *Env) unknownVerb(name string) int {
	if near := closest(name); near != "" {
		fmt.Fprintf(e.Stderr, "ERROR [%s] unknown command %q; did you mean %q?\nhint: harness %s …, or `harness help` for the list of commands\n", failure.Usage, name, near, near)
		return ExitError
	}
	fmt.Fprintf(e.Stderr, "ERROR [%s] unknown command %q\nhint: run `harness help` for the list of commands\n", failure.Usage, name)
	return ExitError
}

// printHelp is verb c's --help: its synopsis, its summary and its flags,
// written as they are everywhere else (--name), a boolean without an
// argument and any other with a placeholder that says what it takes.
func (e *Env) printHelp(c *command, fs *flag.FlagSet) {
	fmt.Fprintf(e.Stdout, "usage: %s\n\n%s\n", c.usage(), c.summary)
	named := placeholders(c.args)
	var opts strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		fmt.Fprintf(&opts, "  --%s", f.Name)
		usage := f.Usage
		if !isBool(f) {
			var kind string
			kind, usage = flag.UnquoteUsage(f)
			if !strings.Contains(f.Usage, "`") {
				kind = placeholder(f, named[f.Name])
			}
			fmt.Fprintf(&opts, " %s", kind)
		}
		fmt.Fprintf(&opts, "\n    \t%s", usage)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(&opts, " (default %s)", f.DefValue)
		}
		opts.WriteString("\n")
	})
	if opts.Len() > 0 {
		fmt.Fprintf(e.Stdout, "\noptions:\n%s", opts.String())
	}
}

// isBool reports whether f is a boolean flag (given without an argument).
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// placeholders reads the argument names a verb's synopsis gives its flags
// ("[--timeout SECONDS]" → timeout: SECONDS), so its help names them the
// same way.
func placeholders(synopsis string) map[string]string {
	out := map[string]string{}
	words := strings.Fields(synopsis)
	for i := 0; i+1 < len(words); i++ {
		name, ok := strings.CutPrefix(strings.TrimLeft(words[i], "["), "--")
		next := strings.TrimRight(words[i+1], "]")
		if ok && next != "" && !strings.HasPrefix(next, "-") && !strings.HasPrefix(next, "[") && next != "|" {
			out[strings.TrimRight(name, "]")] = next
		}
	}
	return out
}

// placeholder is the argument name of a flag whose usage names none: the
// synopsis's, else one for its type.
func placeholder(f *flag.Flag, fromSynopsis string) string {
	if fromSynopsis != "" {
		return fromSynopsis
	}
	switch kind, _ := flag.UnquoteUsage(f); kind {
	case "int", "uint", "float":
		return "N"
	case "duration":
		return "DURATION"
	}
	return "VALUE"
}

// flagErr turns the flag package's parse error into the harness's: an
// unknown flag named as it is written (--name) with the nearest one, and
// the other errors with their flag written so too.
func flagErr(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	name, unknown := strings.CutPrefix(msg, "flag provided but not defined: ")
	if !unknown {
		msg = strings.Replace(msg, "flag -", "flag --", 1)
		msg = strings.Replace(msg, "argument: -", "argument: --", 1)
		return failure.Wrap(failure.Usage, err, "%s", msg).WithHint("run `%s --help`", fs.Name())
	}
	name = strings.TrimLeft(name, "-")
	if name != "" && (name[0] >= '0' && name[0] <= '9' || name[0] == '.') {
		// A value, not a mistyped flag: "-1/2", "-3".
		return failure.Wrap(failure.Usage, err, "-%s is not a flag of %s, and a value may not begin with \"-\"", name, fs.Name()).
			WithHint("run `%s --help` for what it takes", fs.Name())
	}
	written := "--" + name
	if len(name) == 1 {
		written = "-" + name // the short flag other tools take (-o FILE): said as typed
	}
	fe := failure.Wrap(failure.Usage, err, "unknown flag %s for %s", written, fs.Name())
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near := closestFlag(name, names); near != "" {
		return fe.WithHint("did you mean --%s?", near)
	}
	if len(names) == 0 {
		return fe.WithHint("%s takes no flags; run `%s --help`", fs.Name(), fs.Name())
	}
	return fe.WithHint("%s takes --%s; run `%s --help`", fs.Name(), strings.Join(names, ", --"), fs.Name())
}

// closestFlag is the flag a mistyped name most likely meant: the nearest
// within two edits (one for a name of four letters or less, where two
// reach almost any short flag), else the one flag it begins (a short -o
// for --out); "" when there is none.
func closestFlag(name string, names []string) string {
	names = slices.Sorted(slices.Values(names))
	best, bestD := "", 3
	if len(name) <= 4 {
		bestD = 2
	}
	for _, n := range names {
		if d := editDistance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best != "" || name == "" {
		return best
	}
	for _, n := range names {
		if strings.HasPrefix(n, name) {
			if best != "" {
				return ""
			}
			best = n
		}
	}
	return best
}
