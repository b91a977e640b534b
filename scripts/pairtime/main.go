// Command pairtime times two commands as whole processes, in turn (A B A B
// …), each reading its own file on standard input, and prints the median
// wall time of each and the median of the ratios A/B pair by pair: a ratio
// taken pair by pair holds when a shared machine's speed drifts during the
// run, where two medians taken minutes apart do not.
//
//	go run ./scripts/pairtime -n 40 -a 'bin/harness-stop' -ain stop.json -b 'bin/noop' -bin stop.json
//
// A command is split on spaces (no shell, so no shell's start is timed).
// -prep runs a command before each run of A, untimed (a reset). An input
// naming several files with a glob (-ain 'pre.*.json') gives them in turn,
// one per run: a session's calls differ from one another, and a hook that
// counts repeated calls (the doom-loop guard) must see them differ.
// -session ID gives every run a session of its own, as each new Claude
// Code session is: the input's "session_id":"ID" and the environment's
// CLAUDE_CODE_SESSION_ID name a new id each run (a session start that
// always sees the same id times a resume, not a new session).
//
// Each row also gives the median count of page faults of A's and B's
// processes (where the system reports them): on a machine where a fault
// is dear (docs/perf.md measured one at 12 to 17 µs), they are most of
// what a hook costs past the floor, and they drift far less than times.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 30, "counted pairs")
	warm := flag.Int("warmup", 3, "pairs run first and not counted")
	a := flag.String("a", "", "command A")
	ain := flag.String("ain", "", "file on A's standard input")
	b := flag.String("b", "", "command B (the baseline)")
	bin := flag.String("bin", "", "file on B's standard input (default: A's)")
	dir := flag.String("dir", "", "directory the commands run in")
	prep := flag.String("prep", "", "command run before each run of A, not timed")
	label := flag.String("label", "", "the row's name")
	session := flag.String("session", "", "the session id in the inputs, made a new one at each run")
	flag.Parse()
	if *a == "" || *b == "" {
		fmt.Fprintln(os.Stderr, "pairtime: -a and -b are required")
		os.Exit(2)
	}
	if *bin == "" {
		*bin = *ain
	}
	ains, bins := inputs(*ain), inputs(*bin)
	var ta, tb, ratios, fa, fb []float64
	for i := 0; i < *warm+*n; i++ {
		if *prep != "" {
			if _, err := run(*prep, "", *dir, nil); err != nil {
				fmt.Fprintln(os.Stderr, "pairtime: prep:", err)
				os.Exit(1)
			}
		}
		ain, bin, env, err := fresh(*session, ains[i%len(ains)], bins[i%len(bins)], i)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pairtime: -session:", err)
			os.Exit(1)
		}
		ra, err := run(*a, ain, *dir, env)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pairtime: A:", err)
			os.Exit(1)
		}
		rb, err := run(*b, bin, *dir, env)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pairtime: B:", err)
			os.Exit(1)
		}
		if i < *warm {
			continue
		}
		ta, tb = append(ta, ms(ra.took)), append(tb, ms(rb.took))
		ratios = append(ratios, float64(ra.took)/float64(rb.took))
		fa, fb = append(fa, float64(ra.faults)), append(fb, float64(rb.faults))
	}
	faults := ""
	if median(fa) > 0 {
		faults = fmt.Sprintf("  faults A %.0f B %.0f", median(fa), median(fb))
	}
	fmt.Printf("%-52s A %6.2f ms  B %6.2f ms  A/B %5.2f× (p25 %4.2f, p75 %4.2f)%s\n",
		*label, median(ta), median(tb), median(ratios), quantile(ratios, 0.25), quantile(ratios, 0.75), faults)
}

// result is one run: its wall time and its process's page faults (0 where
// the system does not report them).
type result struct {
	took   time.Duration
	faults int64
}

// inputs lists the files pattern names, in order; a pattern that names
// none is a file name (or "").
func inputs(pattern string) []string {
	if m, _ := filepath.Glob(pattern); len(m) > 0 {
		return m
	}
	return []string{pattern}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// fresh is the run's inputs and environment: as given without -session;
// with it, copies of the inputs (written before the clock starts) whose
// session id is a new one, named in the environment too.
func fresh(session, ain, bin string, run int) (string, string, []string, error) {
	if session == "" {
		return ain, bin, nil, nil
	}
	id := fmt.Sprintf("%s-%d-%d", session, os.Getpid(), run)
	env := append(os.Environ(), "CLAUDE_CODE_SESSION_ID="+id)
	swap := func(in, name string) (string, error) {
		data, err := os.ReadFile(in)
		if err != nil {
			return "", err
		}
		out := filepath.Join(os.TempDir(), fmt.Sprintf("pairtime-%d-%s.json", os.Getpid(), name))
		was := []byte(`"session_id":"` + session + `"`)
		return out, os.WriteFile(out, bytes.ReplaceAll(data, was, []byte(`"session_id":"`+id+`"`)), 0o644)
	}
	a, err := swap(ain, "a")
	if err != nil {
		return "", "", nil, err
	}
	b, err := swap(bin, "b")
	return a, b, env, err
}

// run starts cmd in dir with the file in on its standard input (and env
// as its environment, nil: this process's) and waits for it; its exit
// status is not judged (a hook that blocks exits 0 or 2).
func run(cmd, in, dir string, env []string) (result, error) {
	f := strings.Fields(cmd)
	c := exec.Command(f[0], f[1:]...)
	c.Dir, c.Env = dir, env
	if in != "" {
		r, err := os.Open(in)
		if err != nil {
			return result{}, err
		}
		defer r.Close()
		c.Stdin = r
	}
	start := time.Now()
	err := c.Run()
	d := time.Since(start)
	if _, exit := err.(*exec.ExitError); exit {
		err = nil
	}
	if err != nil {
		return result{}, err
	}
	return result{took: d, faults: faults(c.ProcessState)}, nil
}

func median(v []float64) float64 { return quantile(v, 0.5) }

func quantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}
