package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/wiring"
)

// wiringProblems is what undid the harness's wiring into Claude Code for
// the state root dir (internal/wiring): its hooks no longer registered,
// "disableAllHooks", an installed executable replaced. The record's account
// of executables already verified spares hashing them at every status.
func (e *Env) wiringProblems(dir string) []string {
	w := wiring.Where{Projects: wiring.Projects("", os.Getenv("CLAUDE_PROJECT_DIR"), e.Cwd, dir), BinDirs: []string{wiring.DefaultBinDir()}}
	if bin, err := e.binDir(""); err == nil {
		w.BinDirs = append(w.BinDirs, bin)
	}
	if rec := record.Dir(dir); rec != "" {
		w.Verified = filepath.Join(rec, record.WiringVerified)
	}
	return wiring.Check(w)
}

// printWiring writes one WARN line per problem, then what restores it.
func (e *Env) printWiring(problems []string) {
	for _, p := range problems {
		fmt.Fprintf(e.Stdout, "WARN hooks: %s\n", p)
	}
	reinstall, disabled := false, false
	for _, p := range problems {
		if wiring.Disabled(p) {
			disabled = true
		} else {
			reinstall = true
		}
	}
	if disabled {
		fmt.Fprintln(e.Stdout, "hint: remove \"disableAllHooks\": true from the file named above (Claude Code's switch for every hook, yours too: `harness install` leaves it as it is)")
	}
	if reinstall {
		fmt.Fprintln(e.Stdout, "hint: `harness install` (or ./install.sh) puts the hooks and executables back; `harness hooks status` shows each hook")
	}
}
