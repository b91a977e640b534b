package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/shellscan"
	"github.com/harness-agent/harness/internal/wiring"
)

const ruleWiring = "harness-wiring"

// wired is what keeps the harness running, as one call sees it: a write
// to any of it could switch every check off (the hooks removed from a
// settings file, "disableAllHooks", an executable replaced, the record
// forged). Each path is known by name and, when it exists, by its file
// (os.Stat follows symlinks in one system call): a target is compared by
// identity, so a symlinked ~/.claude, a settings file a dotfile manager
// links elsewhere, or a hard link all count, at one stat per path.
type wired struct {
	settings []spot // settings files Claude Code reads for this session
	dirs     []spot // directories whose every file is protected
}

// spot is one protected path, its file when it exists, and how a reason
// names it.
type spot struct {
	path string
	fi   os.FileInfo
	what string
}

func newSpot(path, what string) spot {
	s := spot{path: path, what: what}
	if fi, err := os.Stat(path); err == nil {
		s.fi = fi
	}
	return s
}

// wiredPaths gathers the protected paths once per call, and only for a
// call that writes: a file tool, or a Bash command shellscan says writes.
func (c *call) wiredPaths() *wired {
	if c.wiring != nil {
		return c.wiring
	}
	projects := []string{c.Root, c.cwd, git.NearestTop(c.cwd)}
	if d := os.Getenv("CLAUDE_PROJECT_DIR"); d != "" {
		projects = append(projects, filepath.Clean(d))
	}
	w := &wired{}
	for _, f := range wiring.SettingsFiles(projects...) {
		w.settings = append(w.settings, newSpot(f, "a Claude Code settings file (it registers the harness's hooks, and \"disableAllHooks\" there switches them all off)"))
	}
	if d := wiring.ManagedDropIns(); d != "" {
		w.dirs = append(w.dirs, newSpot(d, "Claude Code's managed settings"))
	}
	for _, d := range wiring.SkillDirs(projects...) {
		w.dirs = append(w.dirs, newSpot(d, "the installed harness skill"))
	}
	if b := record.Base(); b != "" {
		w.dirs = append(w.dirs, newSpot(b, "the harness's record"))
	}
	for _, d := range binDirs() {
		w.dirs = append(w.dirs, newSpot(d, "the installed harness executables"))
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
	fi, err := os.Stat(target)
	exists := err == nil
	base := filepath.Base(target)
	var parent os.FileInfo
	for _, s := range w.settings {
		switch {
		case target == s.path:
			return s.what
		case exists && s.fi != nil && os.SameFile(fi, s.fi):
			if filepath.Base(s.path) != base || !sameDir(filepath.Dir(target), filepath.Dir(s.path)) {
				return "another name (a link) of " + s.path + ", " + s.what
			}
			return s.what
		case !exists && filepath.Base(s.path) == base:
			// A settings file not there yet, created through another
			// name of its directory.
			if parent == nil {
				if parent, err = os.Stat(filepath.Dir(target)); err != nil {
					continue
				}
			}
			if dir, err := os.Stat(filepath.Dir(s.path)); err == nil && os.SameFile(parent, dir) {
				return s.what
			}
		}
	}
	if what := inDirs(target, w.dirs); what != "" {
		return what
	}
	if wiring.IsInstallDir(filepath.Dir(target)) {
		return "the installed harness executables"
	}
	return ""
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := os.Stat(a)
	y, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(x, y)
}

// inDirs names the protected directory p lies in (p itself included), or
// "": by name, then by identity, walking up from p's deepest existing
// directory.
func inDirs(p string, dirs []spot) string {
	exist := false
	for _, d := range dirs {
		if within(p, d.path) {
			return d.what
		}
		exist = exist || d.fi != nil
	}
	if !exist {
		return ""
	}
	for a := p; ; a = filepath.Dir(a) {
		if fi, err := os.Stat(a); err == nil {
			for _, d := range dirs {
				if d.fi != nil && os.SameFile(fi, d.fi) {
					return d.what
				}
			}
		}
		if a == "/" || a == "." || filepath.Dir(a) == a {
			return ""
		}
	}
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

// wiringDynamic refuses a write whose target is not known statically but
// whose directory is (Under), when that directory lies in a protected one.
func (c *call) wiringDynamic(wr shellscan.Write) (hook.Decision, bool) {
	under := wr.Under()
	if under == "" {
		return hook.Decision{}, false
	}
	dir := resolve(under)
	if what := inDirs(dir, c.wiredPaths().dirs); what != "" {
		return deny(ruleWiring, fmt.Sprintf("`%s` writes in %s: that is %s; while the harness is on, only the user changes it.", wr.Op, dir, what),
			"leave it as it is (reading it is fine); if the task truly needs a change there, ask the user to make it."), true
	}
	return hook.Decision{}, false
}

// wiredBelow names the wiring a removal or move of the tree dir (resolved)
// takes with it, or "". Rare (rm -r, mv of a directory), so the protected
// paths are resolved here.
func (c *call) wiredBelow(dir string) string {
	w := c.wiredPaths()
	for _, s := range append(append([]spot(nil), w.settings...), w.dirs...) {
		if s.fi == nil {
			continue
		}
		if p := resolve(s.path); within(p, dir) {
			return "the directory holding " + s.path + ", " + s.what
		}
	}
	return ""
}
