package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/shellscan"
	"github.com/harness-agent/harness/internal/wiring"
)

const ruleWiring = "harness-wiring"

// wired is what keeps the harness running, as one call sees it: a write
// to any of it could switch every check off (the hooks removed from a
// settings file, "disableAllHooks", an executable replaced, the record
// forged). Paths are absolute, with symlinks resolved as the kernel would.
type wired struct {
	settings []string // settings files Claude Code reads for this session
	dirs     []place  // directories whose every file is protected
}

// place is a protected directory and how a reason names it.
type place struct{ dir, what string }

// wiredPaths gathers the protected paths once per call, and only for a
// call that writes: a file tool, or a Bash command shellscan says writes.
func (c *call) wiredPaths() *wired {
	if c.wiring != nil {
		return c.wiring
	}
	projects := wiring.Projects(os.Getenv("CLAUDE_PROJECT_DIR"), c.dir, c.cwd)
	w := &wired{}
	for _, f := range wiring.SettingsFiles(projects...) {
		w.settings = append(w.settings, resolve(f))
	}
	if d := wiring.ManagedDropIns(); d != "" {
		w.dirs = append(w.dirs, place{resolve(d), "Claude Code's managed settings"})
	}
	for _, d := range wiring.SkillDirs(projects...) {
		w.dirs = append(w.dirs, place{resolve(d), "the installed harness skill"})
	}
	if b := record.Base(); b != "" {
		w.dirs = append(w.dirs, place{resolve(b), "the harness's record"})
	}
	for _, d := range binDirs() {
		w.dirs = append(w.dirs, place{resolve(d), "the installed harness executables"})
	}
	c.wiring = w
	return w
}

// binDirs are the install directories known without looking at a write's
// target: the one this hook runs from and the default one, when an install
// put its manifest there. (Any other directory holding a manifest is found
// from the target: see wiredTarget.)
func binDirs() []string {
	var out []string
	if self, err := os.Executable(); err == nil {
		if d := filepath.Dir(self); wiring.IsInstallDir(d) {
			out = append(out, d)
		}
	}
	if d := wiring.DefaultBinDir(); d != "" && wiring.IsInstallDir(d) {
		out = append(out, d)
	}
	return out
}

// wiredTarget names what the write of target (absolute, resolved) would
// change of the harness's wiring, or "".
func (c *call) wiredTarget(target string) string {
	w := c.wiredPaths()
	for _, f := range w.settings {
		if target == f {
			return "a Claude Code settings file (it registers the harness's hooks, and \"disableAllHooks\" there switches them all off)"
		}
	}
	for _, p := range w.dirs {
		if within(target, p.dir) {
			return p.what
		}
	}
	if wiring.IsInstallDir(filepath.Dir(target)) {
		return "the installed harness executables"
	}
	if fi, err := os.Lstat(target); err == nil && fi.Mode().IsRegular() && linked(fi) {
		for _, f := range w.settings {
			if other, err := os.Stat(f); err == nil && os.SameFile(fi, other) {
				return "a hard link of a Claude Code settings file (it registers the harness's hooks)"
			}
		}
	}
	return ""
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/") || dir == "/"
}

// wiringWrite refuses a file tool's write to the harness's wiring.
func (c *call) wiringWrite(path, target string) (hook.Decision, bool) {
	what := c.wiredTarget(target)
	if what == "" {
		return hook.Decision{}, false
	}
	return deny(ruleWiring, fmt.Sprintf("%s on %s: that is %s; while the harness is on, only the user changes it.", c.tool, path, what),
		"leave it as it is (reading it is fine); if the task truly needs a change there, ask the user to make it."), true
}

// wiringBash refuses a Bash command that certainly writes the harness's
// wiring: only writes whose target is known statically count, or whose
// target is not but lies in a protected directory (`rm -rf records/*`); a
// file name from an expansion or glob is never guessed at. git's own
// restores, index entries, link sources, touch and mkdir change nothing
// that matters.
func (c *call) wiringBash(rep shellscan.Report) (hook.Decision, bool) {
	for _, wr := range rep.Writes {
		if wr.Reach != shellscan.ReachAll {
			continue
		}
		switch wr.Kind {
		case shellscan.GitRestore, shellscan.GitIndex, shellscan.LinkSource, shellscan.Touch, shellscan.Mkdir:
			continue
		}
		if wr.Dynamic {
			if d, denied := c.wiringDynamic(wr); denied {
				return d, true
			}
			continue
		}
		for _, p := range c.physical(wr) {
			what := c.wiredTarget(p)
			if what == "" && wr.Tree && (wr.Kind == shellscan.Remove || wr.Kind == shellscan.MoveSource) {
				what = c.wiredBelow(p)
			}
			if what != "" {
				return deny(ruleWiring, fmt.Sprintf("`%s` writes %s: that is %s; while the harness is on, only the user changes it.", wr.Op, p, what),
					"leave it as it is (reading it is fine); if the task truly needs a change there, ask the user to make it."), true
			}
		}
	}
	return hook.Decision{}, false
}

// wiredBelow names the wiring a removal or move of the tree dir takes
// with it, or "".
func (c *call) wiredBelow(dir string) string {
	w := c.wiredPaths()
	for _, f := range w.settings {
		if within(f, dir) {
			if _, err := os.Lstat(f); err == nil {
				return "the directory holding " + f + ", a Claude Code settings file"
			}
		}
	}
	for _, p := range w.dirs {
		if within(p.dir, dir) {
			if _, err := os.Lstat(p.dir); err == nil {
				return "the directory holding " + p.what + " (" + p.dir + ")"
			}
		}
	}
	return ""
}

// wiringDynamic refuses a write whose target is not known statically but
// whose directory is (Under), when that directory lies in a protected one.
func (c *call) wiringDynamic(wr shellscan.Write) (hook.Decision, bool) {
	under := wr.Under()
	if under == "" {
		return hook.Decision{}, false
	}
	dir := resolve(under)
	for _, p := range c.wiredPaths().dirs {
		if within(dir, p.dir) {
			return deny(ruleWiring, fmt.Sprintf("`%s` writes in %s: that is %s; while the harness is on, only the user changes it.", wr.Op, dir, p.what),
				"leave it as it is (reading it is fine); if the task truly needs a change there, ask the user to make it."), true
		}
	}
	return hook.Decision{}, false
}
