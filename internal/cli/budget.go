package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/budget"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

var budgetVerb = &command{
	name:    "budget",
	args:    "[--max-job-minutes N] [--max-session-minutes N] [--max-job-tokens N] [--max-session-tokens N] [--json]",
	summary: "show what the job spent (time, API tokens) against its limits; with flags, set the limits, 0 removing one (setting them is a person's decision: refused inside a Claude Code session)",
	run:     runBudget,
}

// budgetJSON is `harness budget --json`.
type budgetJSON struct {
	Sessions int              `json:"sessions"`
	Minutes  int64            `json:"minutes"`
	Tokens   int64            `json:"tokens"`
	Limits   map[string]int   `json:"limits"`
	Used     []budgetLineJSON `json:"used"`
	// Reviews is the part of the spend above that the reviewer's runs took.
	Reviews budgetReviewsJSON `json:"reviews"`
}

type budgetReviewsJSON struct {
	Count   int     `json:"count"`
	Seconds int64   `json:"seconds"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

type budgetLineJSON struct {
	Name    string `json:"name"`
	Limit   int64  `json:"limit"`
	Used    int64  `json:"used"`
	Percent int64  `json:"percent"`
	Over    bool   `json:"over"`
}

func runBudget(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	asJSON := fs.Bool("json", false, "print JSON for machines")
	var b state.Budget
	limits := b.Limits()
	set := map[string]*string{}
	for _, l := range limits {
		flagName := strings.ReplaceAll(l.Name, "_", "-")
		what := "API tokens (input, cache and output, as the API counts them)"
		if strings.HasSuffix(l.Name, "_minutes") {
			what = "minutes of wall-clock time"
		}
		scope := "the whole job"
		if strings.Contains(l.Name, "_session_") {
			scope = "each session"
		}
		set[l.Name] = fs.String(flagName, "", fmt.Sprintf("limit %s to N %s (session_config.%s; 0 removes the limit)", scope, what, l.Name))
	}
	if err := e.parseNone(c, fs, args); err != nil {
		return e.fail(err)
	}
	changes := map[string]int{}
	for _, l := range limits {
		v := *set[l.Name]
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
		if err != nil || n < 0 || n > 1e9 {
			return e.fail(usageErr(c, "--%s takes a whole number from 0 to 1000000000, got %q", strings.ReplaceAll(l.Name, "_", "-"), v))
		}
		changes[l.Name] = n
	}
	root := e.viewRoot
	if len(changes) > 0 {
		if err := e.personOnly("budget"); err != nil {
			return e.fail(err)
		}
		root = e.stateRoot
	}
	dir, err := root()
	if err != nil {
		return e.fail(err)
	}
	var s *state.State
	if len(changes) > 0 {
		s, err = statecache.Update(dir, func(s *state.State) error {
			for _, l := range s.Config.Budget.Limits() {
				n, ok := changes[l.Name]
				if !ok || *l.Value == n {
					continue
				}
				*l.Value = n
				if n == 0 {
					s.SetConfig(l.Name, nil)
				} else {
					s.SetConfig(l.Name, n)
				}
			}
			return nil
		})
	} else {
		s, err = e.load(dir)
	}
	if err != nil {
		return e.fail(err)
	}
	job := budget.Total(record.Of(dir), nil)
	lines := budget.Measure(s.Config.Budget, job, nil)
	if *asJSON {
		out := budgetJSON{Sessions: job.Sessions, Minutes: int64(job.Elapsed / time.Minute), Tokens: job.Tokens, Limits: map[string]int{}, Used: []budgetLineJSON{},
			Reviews: budgetReviewsJSON{Count: job.Reviews.Count, Seconds: int64(job.Reviews.Elapsed / time.Second), Tokens: job.Reviews.Tokens, CostUSD: float64(job.Reviews.CostMicroUSD) / 1e6}}
		for _, l := range s.Config.Budget.Limits() {
			out.Limits[l.Name] = *l.Value
		}
		for _, l := range lines {
			out.Used = append(out.Used, budgetLineJSON{l.Name, l.Limit, l.Used, l.Percent(), l.Over()})
		}
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
		return ExitOK
	}
	fmt.Fprintf(e.Stdout, "spent: %d min, %d tokens over %d session(s)\n", int64(job.Elapsed/time.Minute), job.Tokens, job.Sessions)
	if r := job.Reviews; r.Count > 0 {
		fmt.Fprintf(e.Stdout, "  of which %d review(s): %s, %d tokens, $%.2f\n", r.Count, r.Elapsed.Round(time.Second), r.Tokens, float64(r.CostMicroUSD)/1e6)
	}
	for _, l := range s.Config.Budget.Limits() {
		switch {
		case *l.Value == 0:
			fmt.Fprintf(e.Stdout, "%s: no limit\n", l.Name)
		case strings.Contains(l.Name, "_session_"):
			fmt.Fprintf(e.Stdout, "%s=%d (per session)\n", l.Name, *l.Value)
		default:
			for _, m := range lines {
				if m.Name == l.Name {
					state := ""
					if m.Over() {
						state = "  REACHED: sessions start no work"
					} else if m.Near() {
						state = "  nearly spent"
					}
					fmt.Fprintf(e.Stdout, "%s%s\n", m, state)
				}
			}
		}
	}
	return ExitOK
}
