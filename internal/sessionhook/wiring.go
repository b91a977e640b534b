package sessionhook

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/project"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/wiring"
)

// wiringNote checks how the harness is wired into Claude Code
// (internal/wiring: hooks registered, not switched off, executables as
// installed) and returns the note for the model, "" when all is well.
// fresh is true the first time a finding is made: a TAMPER line is then
// logged, once, not at every hook.
func (c *call) wiringNote(session func() int) (note string, fresh bool) {
	problems := wiring.Check(wiringWhere(c.Project, c.dir))
	seen := c.Record().Path(record.WiringSeen)
	if seen == "" {
		return wiringText(problems), false
	}
	fresh = wiring.Fresh(problems, seen)
	if fresh {
		progress.Append(c.Root, progress.Entry{Time: c.now, Session: session(), Type: progress.Tamper,
			Message: "hooks " + strings.Join(problems, "; ")})
	}
	return wiringText(problems), fresh
}

// wiringWhere is what a hook checks for the project p: the settings of the
// session's project directories, the install the hook runs from and the
// default one, and the record's account of executables already verified.
func wiringWhere(p *project.Project, cwd string) wiring.Where {
	w := wiring.Where{Projects: wiring.Projects(p.Root, os.Getenv("CLAUDE_PROJECT_DIR"), cwd, p.Root), BinDirs: []string{wiring.DefaultBinDir()}}
	if self, err := os.Executable(); err == nil {
		w.BinDirs = append(w.BinDirs, filepath.Dir(self))
	}
	w.Verified = p.Record().Path(record.WiringVerified)
	w.Verdict = p.Record().Path(record.WiringVerdict)
	return w
}

// wiringText tells the model what undid the harness's wiring.
func wiringText(problems []string) string {
	if len(problems) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("HARNESS TAMPER (hooks): the harness's own checks may no longer run:\n")
	for _, p := range problems {
		b.WriteString("- " + p + "\n")
	}
	fix := "they restore it with `harness install`"
	for _, p := range problems {
		if wiring.Disabled(p) {
			fix = "they remove \"disableAllHooks\" from the settings file named, and run `harness install` for anything else"
		}
	}
	b.WriteString("Do not change Claude Code's settings, the harness's executables or its record. Tell the user now: " + fix + " (`harness status` shows what is wrong).")
	return b.String()
}
