package programs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/plan/plantest"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/tidwall/gjson"
)

// commands are the scenarios' own assertions on JSON files, which say what
// is meant where a grep on the text would say how it happens to be laid out.
var commands = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"jsonpath":    cmdJSONPath,
	"tasks":       cmdTasks,
	"sessionfile": cmdSessionFile,
	"plan":        cmdPlan,
}

// cmdJSONPath: jsonpath [-re] FILE PATH WANT. The value at the gjson PATH
// of the JSON in FILE is WANT (its text: a string without quotes, a number,
// true, null, or a JSON array or object as written compactly); with -re,
// its text matches the regular expression WANT; with !, it is not (does
// not). WANT "-" asserts PATH is absent. FILE may be stdout or stderr,
// the last command's (testscript's ReadFile); an empty one has no members.
func cmdJSONPath(ts *testscript.TestScript, neg bool, args []string) {
	var re *regexp.Regexp
	if len(args) > 0 && args[0] == "-re" {
		args = args[1:]
		if len(args) == 3 {
			var err error
			if re, err = regexp.Compile(args[2]); err != nil {
				ts.Fatalf("jsonpath -re: %v", err)
			}
		}
	}
	if len(args) != 3 {
		ts.Fatalf("usage: jsonpath [-re] FILE PATH WANT")
	}
	doc := ts.ReadFile(args[0])
	if strings.TrimSpace(doc) != "" && !gjson.Valid(doc) {
		ts.Fatalf("%s is not valid JSON", args[0])
	}
	r := gjson.Get(doc, args[1]) // nothing in an empty file: a hook that said nothing
	got := "-"
	if r.Exists() {
		got = r.String()
		if r.IsObject() || r.IsArray() {
			got = compact(r.Raw)
		}
		if r.Type == gjson.Null {
			got = "null"
		}
	}
	match := got == args[2]
	if re != nil {
		match = r.Exists() && re.MatchString(got)
	}
	if match == neg {
		if neg {
			ts.Fatalf("%s: %s is %s", args[0], args[1], got)
		}
		ts.Fatalf("%s: %s is %s, want %s", args[0], args[1], got, args[2])
	}
}

// cmdTasks: tasks FILE ID=STATUS… Each named task of the tasks file FILE
// has the status given (ID=STATUS, or ID=STATUS/ATTEMPTS to check the
// attempts too); with !, none of them has.
func cmdTasks(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: tasks FILE ID=STATUS[/ATTEMPTS]…")
	}
	doc := ts.ReadFile(args[0])
	for _, a := range args[1:] {
		id, want, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("tasks: %q is not ID=STATUS", a)
		}
		wantStatus, _, withAttempts := strings.Cut(want, "/")
		t := gjson.Get(doc, `tasks.#(id=="`+id+`")`)
		if !t.Exists() {
			ts.Fatalf("%s: no task %s", args[0], id)
		}
		got := t.Get("status").String()
		match := got == wantStatus
		if withAttempts {
			got += "/" + t.Get("attempts").String()
			match = got == want
		}
		if match == neg {
			if neg {
				ts.Fatalf("%s: %s is %s", args[0], id, got)
			}
			ts.Fatalf("%s: %s is %s, want %s", args[0], id, got, want)
		}
	}
}

// cmdPlan: plan taskmaster FILE TAG=N… writes a Taskmaster tasks.json of
// N tasks in each TAG (plantest.Taskmaster): a plan of thousands of items
// without thousands of lines in the scenario.
func cmdPlan(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || args[0] != "taskmaster" {
		ts.Fatalf("usage: plan taskmaster FILE TAG=N…")
	}
	var tags []plantest.Tag
	for _, a := range args[2:] {
		name, n, ok := strings.Cut(a, "=")
		count, err := strconv.Atoi(n)
		if !ok || err != nil || count < 0 {
			ts.Fatalf("plan: %q is not TAG=N", a)
		}
		tags = append(tags, plantest.Tag{Name: name, Tasks: count})
	}
	path := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	ts.Check(os.WriteFile(path, plantest.Taskmaster(tags...), 0o644))
}

// compact removes the insignificant spaces of a JSON text.
func compact(raw string) string {
	var b strings.Builder
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			b.WriteByte(c)
			if c == '\\' && i+1 < len(raw) {
				i++
				b.WriteByte(raw[i])
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			b.WriteByte(c)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// bounded: exec bounded DURATION PROGRAM [ARGS…] runs PROGRAM with the
// scenario's standard input, output and environment, and fails (exit 124,
// a line on stderr) when it has not finished within DURATION, killing it:
// testscript has no deadline of its own, and a hook that hangs must fail
// its scenario instead of stalling the suite. The deadline is generous (a
// hang against none, never a speed target: those are benchmarks). It runs
// as a program of its own (TestMain), so the hook reads the stdin the
// scenario gave it.
func bounded(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bounded DURATION PROGRAM [ARGS…]")
		return 2
	}
	limit, err := time.ParseDuration(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "bounded: %v\n", err)
		return 2
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "bounded: %v\n", err)
		return 2
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bounded: %v\n", err)
			return 2
		}
		return 0
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		fmt.Fprintf(os.Stderr, "bounded: %s did not finish within %s (killed): a hang\n", args[1], limit)
		return 124
	}
}

// cmdSessionFile: sessionfile VAR PREFIX SESSION [DIR]. Sets VAR to the
// path of the session file PREFIX+SESSION+".json" the hooks keep for the
// state root DIR ($WORK by default) beside its record
// (Record.SessionFile), reading the scenario's HARNESS_RECORD_DIR,
// XDG_STATE_HOME and HOME as the harness does.
func cmdSessionFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 4 {
		ts.Fatalf("usage: sessionfile VAR PREFIX SESSION [DIR]")
	}
	dir := ts.Getenv("WORK")
	if len(args) == 4 {
		dir = ts.MkAbs(args[3])
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	base := ts.Getenv("HARNESS_RECORD_DIR")
	if base == "" {
		state := ts.Getenv("XDG_STATE_HOME")
		if state == "" {
			state = filepath.Join(ts.Getenv("HOME"), ".local", "state")
		}
		base = filepath.Join(state, "harness", "records")
	}
	sum := sha256.Sum256([]byte(dir))
	ts.Setenv(args[0], filepath.Join(base, hex.EncodeToString(sum[:8]), "sessions", args[1]+args[2]+".json"))
}
