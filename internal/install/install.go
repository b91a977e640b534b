// Package install puts the harness in place for Claude Code: the executables
// in a bin directory, the /harness skill, and the hooks in a settings.json.
// It is the one implementation behind `harness install` (from a release
// archive, an npm package or a build) and install.sh (which builds, then
// calls it).
//
// Nothing is half-installed: the sources, the skill directory, every
// directory to write in and the settings file are checked before the first
// copy, and when anything fails after that, what this run changed is put
// back as it was (a journal of created and replaced files). Running it again
// changes nothing; installing over an older version replaces the
// executables, the skill and the settings entries, and says from which
// version to which.
package install

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/settings"
	"github.com/harness-agent/harness/internal/wiring"
)

// Files an install leaves beside what it installs.
const (
	// SkillMarker, in an installed skill, proves the copy is ours: a skill
	// without it (an `npx skills` copy, the user's own) is never replaced
	// or removed.
	SkillMarker = ".installed-by-harness"
	// Registry, in a bin directory, lists the settings files whose hooks
	// run from it, so that uninstalling one scope leaves the executables
	// another one still uses.
	Registry = wiring.Registry
	// VersionFile, in a bin directory, holds the version installed there.
	VersionFile = ".harness-version"
	// Beside them, wiring.Manifest lists the executables' digests.
)

// Options say what to install where.
type Options struct {
	Home      string // the user's home: ~/.claude lives there
	BinDir    string // where the executables go; "" is ~/.claude/harness/bin
	Project   string // project scope: DIR/.claude/{settings.json,skills}; "" is the user scope
	From      string // the directory holding the executables to install
	SkillFrom string // a skill directory to install instead of the embedded one
	Skill     fs.FS  // the embedded skill (its files under "harness/")
	Version   string // the version being installed
	DryRun    bool
	// Sandbox adds Claude Code's sandbox settings (sandbox.go); with
	// Uninstall, it removes only them. RecordDir and LockDir are the
	// record's and the locks' directories it names ("": the defaults).
	Sandbox            bool
	RecordDir, LockDir string
	// Name is how messages name the installer ("harness install", or
	// "install.sh" when the script calls it); Rerun is the command a hint
	// tells the user to run again.
	Name, Rerun string
	Out, Err    io.Writer
}

// run is one install or uninstall.
type run struct {
	Options
	settings, skillDir, scope string
	defaultBin                string
	journal                   []entry
}

// entry is one journaled change: a path this run created, or replaced
// (its old content kept at saved until the run succeeds).
type entry struct{ path, saved string }

// Programs lists the executables an install carries: every hook and the
// harness command, with the platform's suffix.
func Programs() []string {
	ext := ""
	if runtime.GOOS == "windows" {
		ext = ".exe"
	}
	out := []string{"harness" + ext}
	for _, h := range settings.Hooks {
		out = append(out, h.Program+ext)
	}
	return out
}

func (o Options) prepare() (*run, error) {
	if o.Home == "" {
		return nil, failure.New(failure.EnvSetup, "HOME is not set").WithHint("run it as the user who runs Claude Code")
	}
	r := &run{Options: o, defaultBin: filepath.Join(o.Home, ".claude", "harness", "bin")}
	if r.BinDir == "" {
		r.BinDir = r.defaultBin
	}
	r.BinDir = filepath.Clean(r.BinDir)
	if o.Project != "" {
		fi, err := os.Stat(o.Project)
		if err != nil || !fi.IsDir() {
			return nil, failure.New(failure.Config, "--project %s: no such directory", o.Project)
		}
		p, err := filepath.EvalSymlinks(o.Project)
		if err != nil {
			return nil, failure.Wrap(failure.Config, err, "--project %s: %v", o.Project, err)
		}
		r.Project = p
		r.settings = filepath.Join(p, ".claude", "settings.json")
		r.skillDir = filepath.Join(p, ".claude", "skills", "harness")
		r.scope = "--project " + p
	} else {
		r.settings = filepath.Join(o.Home, ".claude", "settings.json")
		r.skillDir = filepath.Join(o.Home, ".claude", "skills", "harness")
	}
	if r.Name == "" {
		r.Name = "harness install"
	}
	if r.Rerun == "" {
		r.Rerun = r.Name
	}
	return r, nil
}

func (r *run) say(format string, args ...any) {
	fmt.Fprintf(r.Out, "%s: %s\n", r.Name, fmt.Sprintf(format, args...))
}

// act does fn, or in a dry run says what it would do.
func (r *run) act(what string, fn func() error) error {
	if r.DryRun {
		fmt.Fprintf(r.Out, "  would %s\n", what)
		return nil
	}
	return fn()
}

// note says, in a dry run, what is already in place.
func (r *run) note(format string, args ...any) {
	if r.DryRun {
		fmt.Fprintf(r.Out, "  %s\n", fmt.Sprintf(format, args...))
	}
}

// sayUpgrade says, in a dry run, what the install would do to the version
// installed in the bin directory (before, "" when there is none).
func (r *run) sayUpgrade(before string) {
	switch {
	case before == "":
		r.note("no harness installed there yet: would install %s", orUnknown(r.Version))
	case r.Version == "":
		r.note("would replace the installed %s", before)
	case before == r.Version:
		r.note("%s is installed there: would install it again", before)
	default:
		r.note("would upgrade %s → %s", before, r.Version)
	}
}

func orUnknown(version string) string {
	if version == "" {
		return "this version"
	}
	return version
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Install installs the harness as o says.
func Install(o Options) (err error) {
	r, err := o.prepare()
	if err != nil {
		return err
	}
	if r.DryRun {
		r.say("dry run: nothing will be changed")
	}
	defer func() {
		if err != nil && len(r.journal) > 0 {
			r.rollback()
			err = withSuffix(err, "; "+r.Name+" undid its changes, everything is as it was before")
		}
	}()

	// Checks: nothing is written before every one passes.
	from, err := filepath.Abs(r.From)
	if err != nil {
		return failure.Wrap(failure.EnvSetup, err, "cannot tell where the executables are: %v", err)
	}
	for _, p := range Programs() {
		if fi, err := os.Stat(filepath.Join(from, p)); err != nil || !fi.Mode().IsRegular() {
			return failure.New(failure.EnvSetup, "%s lacks %s; nothing was installed", from, p).
				WithHint("install from a complete release (every executable beside harness)")
		}
	}
	keepSkill := false
	if _, err := os.Lstat(r.skillDir); err == nil {
		if !isHarnessSkill(r.skillDir) {
			return failure.New(failure.Config, "%s exists and is not the harness skill; nothing was installed", r.skillDir).
				WithHint("move it away, or install at another scope")
		}
		// A harness skill this installer did not put there (an npx skills
		// copy, or the user's own) is theirs: it stays, now and at
		// --uninstall.
		_, err := os.Stat(filepath.Join(r.skillDir, SkillMarker))
		keepSkill = err != nil
	}
	for _, t := range []struct{ what, dir string }{{"executables", r.BinDir}, {"skill", filepath.Dir(r.skillDir)}, {"hooks", filepath.Dir(r.settings)}} {
		if why := unwritable(t.dir); why != "" {
			return failure.New(failure.EnvSetup, "cannot install the %s in %s: %s; nothing was installed", t.what, t.dir, why).
				WithHint("fix that (or choose another --bin-dir or --project), then run %s again", r.Rerun)
		}
	}
	var plan bytes.Buffer
	planned, err := settings.Install(r.settings, r.BinDir, true)
	if err == nil && r.Sandbox {
		if err = r.checkSandbox(); err != nil {
			return err
		}
		_, err = settings.EnableSandbox(r.settings, r.sandboxPlan(), true)
	}
	if err != nil {
		fmt.Fprintln(r.Err, text(err))
		return failure.New(failure.Config, "%s cannot be used (above); nothing was installed", r.settings)
	}
	planned.Print(&plan, "install", true)
	ranFrom, err := dirsOf(r.settings)
	if err != nil {
		return failure.Wrap(failure.Config, err, "%s cannot be used: %v; nothing was installed", r.settings, err)
	}
	before := installedVersion(r.BinDir)

	// The executables.
	step := "installing the executables in " + r.BinDir
	r.say("%s", step)
	if r.DryRun {
		r.sayUpgrade(before)
	}
	if exists(r.BinDir) {
		r.note("%s exists", r.BinDir)
	} else if err := r.act("create "+r.BinDir, func() error { return r.makeDir(r.BinDir) }); err != nil {
		return stepErr(step, err)
	}
	if from != r.BinDir {
		for _, p := range Programs() {
			src, dst := filepath.Join(from, p), filepath.Join(r.BinDir, p)
			verb := "install "
			if exists(dst) {
				verb = "replace "
			}
			if err := r.act(verb+dst, func() error { return r.copyFile(src, dst) }); err != nil {
				return stepErr(step, err)
			}
		}
	}

	// The skill.
	step = "installing the skill in " + r.skillDir
	source := r.SkillFrom
	if source == "" {
		source = "the harness skill of this version"
	}
	if keepSkill {
		if r.sameSkill() {
			r.say("leaving the skill in %s as it is (the same as this version's): %s did not put it there, so --uninstall will leave it too", r.skillDir, r.Name)
		} else {
			r.say("leaving the skill in %s as it is: %s did not put it there (an npx skills copy, or your own), and it differs from this version's skill/harness; to use this one, remove it (npx skills remove harness, or by hand) and run %s again", r.skillDir, r.Name, r.Rerun)
		}
	} else {
		r.say("%s", step)
		what := "copy " + source + " to " + r.skillDir
		if exists(r.skillDir) {
			what = "replace " + r.skillDir + " with " + source
		}
		if err := r.act(what, r.copySkill); err != nil {
			return stepErr(step, err)
		}
	}

	if r.DryRun {
		for _, l := range strings.SplitAfter(plan.String(), "\n") {
			if l != "" {
				fmt.Fprint(r.Out, "  "+l)
			}
		}
		if r.Sandbox {
			if err := r.sandbox(); err != nil {
				return err
			}
		}
		for _, dir := range ranFrom {
			if dir != r.BinDir {
				r.release(dir)
			}
		}
		r.say("dry run: nothing was changed")
		return nil
	}

	step = "registering the hooks in " + r.settings
	if err := r.register(); err != nil {
		return stepErr(step, err)
	}
	res, err := settings.Install(r.settings, r.BinDir, false)
	if err != nil {
		return stepErr(step, err)
	}
	res.Print(r.Out, "install", false)
	if settings.HooksDisabled(res.After) {
		fmt.Fprintf(r.Err, "WARN %s sets \"disableAllHooks\": true, so Claude Code runs none of these hooks\nhint: remove that key from the file yourself: it is Claude Code's switch for every hook, and the install leaves it as it is\n", r.settings)
	}
	if r.Sandbox {
		if err := r.sandbox(); err != nil {
			return stepErr("writing the sandbox settings in "+r.settings, err)
		}
	}
	r.forget()
	writeVersion(r.BinDir, r.Version)
	if err := wiring.WriteManifest(r.BinDir, Programs()); err != nil {
		r.say("WARN could not write %s in %s (%v): `harness status` cannot tell a replaced executable there", wiring.Manifest, r.BinDir, err)
	}

	// The hooks moved here from another bin directory: the old one's
	// executables go once nothing uses them.
	for _, dir := range ranFrom {
		if dir != r.BinDir {
			r.release(dir)
		}
	}

	scope := ""
	if r.scope != "" {
		scope = " (" + r.scope + ")"
	}
	switch {
	case before == "" || r.Version == "":
		r.say("installed%s. In Claude Code, in your project: /harness init, then /harness add \"…\" and /harness run", scope)
	case before == r.Version:
		r.say("installed%s, version %s again. In Claude Code, in your project: /harness init, then /harness add \"…\" and /harness run", scope, r.Version)
	default:
		r.say("upgraded%s from %s to %s. In Claude Code, in your project: /harness init, then /harness add \"…\" and /harness run", scope, before, r.Version)
	}
	if !onPath(r.BinDir) {
		r.say("to run harness from your shell too: export PATH=\"%s:$PATH\" (the hooks do not need it)", r.BinDir)
	}
	return nil
}

// Uninstall removes what Install added: our hook entries, the skill (when
// the installer put it there) and, once no settings file uses them, the
// executables in every directory the removed hooks ran from.
func Uninstall(o Options) error {
	r, err := o.prepare()
	if err != nil {
		return err
	}
	if r.DryRun {
		r.say("dry run: nothing will be changed")
	}
	// The sandbox settings go first: with them gone, a settings file the
	// harness created holds only the hooks, and goes with them.
	if err := r.unsandbox(); err != nil {
		fmt.Fprintln(r.Err, text(err))
		return failure.New(failure.EnvSetup, "could not remove the sandbox settings from %s (above); nothing else was removed", r.settings)
	}
	if r.Sandbox {
		if r.DryRun {
			r.say("dry run: nothing was changed")
		} else {
			r.say("sandbox settings removed; the hooks stay")
		}
		return nil
	}
	ranFrom, err := dirsOf(r.settings)
	if err != nil {
		fmt.Fprintln(r.Err, text(err))
		return failure.New(failure.Config, "%s cannot be used (above); nothing was removed", r.settings)
	}
	res, err := settings.Uninstall(r.settings, r.DryRun)
	if err != nil {
		fmt.Fprintln(r.Err, text(err))
		return failure.New(failure.EnvSetup, "could not remove the hooks from %s (above); nothing else was removed", r.settings)
	}
	res.Print(r.Out, "uninstall", r.DryRun)
	if _, err := os.Stat(filepath.Join(r.skillDir, SkillMarker)); err == nil {
		r.say("removing the skill %s", r.skillDir)
		r.act("remove "+r.skillDir, func() error { return os.RemoveAll(r.skillDir) })
		if !r.DryRun {
			os.Remove(filepath.Dir(r.skillDir)) // only when empty
		}
	} else if _, err := os.Lstat(r.skillDir); err == nil {
		r.say("leaving %s: %s did not put it there (npx skills remove harness, or remove it by hand)", r.skillDir, r.Name)
	}
	dirs := ranFrom
	if !slices.Contains(dirs, r.BinDir) {
		dirs = append(dirs, r.BinDir)
	}
	for _, dir := range dirs {
		r.release(dir)
	}
	if !r.DryRun {
		if _, err := os.Stat(r.settings); errors.Is(err, fs.ErrNotExist) {
			// A settings file the harness created went with our entries;
			// so does the .claude directory made for it, when empty.
			os.Remove(filepath.Dir(r.settings))
		}
		r.say("uninstalled%s", parenthesized(r.scope))
	}
	r.leftovers()
	if r.DryRun {
		r.say("dry run: nothing was changed")
	}
	return nil
}

// leftovers says what uninstalling leaves outside Claude Code's
// directories, and the command that removes it: the records of the
// projects the harness ran in (the user's state directory) and their
// transaction lock files (the lock directory, the user's own by default). Neither is
// in anyone's way, and a project where the harness runs again builds on its
// record, so they are the user's to remove. A project-scope uninstall
// names those of its own project only.
func (r *run) leftovers() {
	dirs, roots := record.All()
	var records, txs []string
	for i, dir := range dirs {
		if r.Project != "" && !within(roots[i], r.Project) {
			continue
		}
		records = append(records, dir)
		if roots[i] != "" && exists(lock.TxPath(roots[i])) {
			txs = append(txs, lock.TxPath(roots[i]))
		}
	}
	var what, rm []string
	if r.Project == "" {
		if len(records) > 0 {
			what = append(what, fmt.Sprintf("the harness's records of %s in %s (its copies of what it last wrote in each, to put back what it did not write, and the shadow checkpoints `harness undo` restores)", plural(len(records), "project"), record.Base()))
			rm = append(rm, "rm -rf "+failure.ShellArg(record.Base()))
		}
		if os.Getenv("HARNESS_LOCK_DIR") == "" {
			// The harness's own directory, the user's alone: removed
			// whole. A directory set by hand may be shared: only the
			// files of this user's projects are named, never a glob.
			if entries, _ := os.ReadDir(lock.Dir()); len(entries) > 0 {
				what = append(what, fmt.Sprintf("the lock directory %s (%s)", lock.Dir(), plural(len(entries), "lock file")))
				rm = append(rm, "rm -rf "+failure.ShellArg(lock.Dir()))
			}
			txs = nil
		}
	}
	if r.Project == "" && len(txs) > 0 {
		for _, tx := range txs {
			what = append(what, "the transaction lock file "+tx)
			rm = append(rm, "rm -f "+failure.ShellArg(tx))
		}
	} else if r.Project != "" {
		for _, dir := range records {
			what = append(what, "the harness's record "+dir)
			rm = append(rm, "rm -rf "+failure.ShellArg(dir))
		}
		for _, tx := range txs {
			what = append(what, "the transaction lock file "+tx)
			rm = append(rm, "rm -f "+failure.ShellArg(tx))
		}
	}
	if len(what) == 0 {
		return
	}
	verb := "leaving"
	if r.DryRun {
		verb = "would leave"
	}
	where := "those projects"
	if r.Project != "" {
		where = "this project"
	}
	r.say("%s %s; once no Claude Code session works in %s, remove them with: %s", verb, strings.Join(what, " and "), where, strings.Join(rm, " && "))
}

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return path != "" && err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func parenthesized(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// release: this run's settings file no longer runs hooks from dir. Its
// executables go once no other settings file in dir's registry still uses
// them. A directory the installer did not fill (no registry) is left alone,
// unless it is this run's bin directory.
func (r *run) release(dir string) {
	if !holdsOurs(dir) {
		return
	}
	list := filepath.Join(dir, Registry)
	registered, err := readLines(list)
	if err != nil && dir != r.BinDir {
		r.say("leaving the executables in %s: %s did not put them there", dir, r.Name)
		return
	}
	var others []string
	for _, f := range registered {
		if f != "" && f != r.settings && uses(f, dir) {
			others = append(others, f)
		}
	}
	if len(others) > 0 {
		r.say("keeping the executables in %s: the hooks in %s still use them", dir, strings.Join(others, ", "))
		if !r.DryRun {
			atomicfile.Replace(list, []byte(strings.Join(others, "\n")+"\n"), 0o644)
		}
		return
	}
	r.say("removing the executables from %s", dir)
	for _, p := range append(Programs(), Registry, VersionFile, wiring.Manifest) {
		path := filepath.Join(dir, p)
		if _, err := os.Lstat(path); err == nil {
			r.act("remove "+path, func() error { return os.Remove(path) })
		}
	}
	if !r.DryRun {
		// The directories go only when empty (and the parent only when it
		// is the default's ~/.claude/harness).
		os.Remove(dir)
		if dir == r.defaultBin {
			os.Remove(filepath.Dir(dir))
		}
	}
}

// register adds this run's settings file to the bin directory's registry.
func (r *run) register() error {
	list := filepath.Join(r.BinDir, Registry)
	lines, _ := readLines(list)
	if slices.Contains(lines, r.settings) {
		return nil
	}
	if err := r.save(list); err != nil {
		return err
	}
	lines = append(lines, r.settings)
	return atomicfile.Replace(list, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// uses reports whether the settings file runs hooks from dir. A file that
// cannot be read counts as using it.
func uses(file, dir string) bool {
	dirs, err := dirsOf(file)
	return err != nil || slices.Contains(dirs, dir)
}

// dirsOf lists the directories the harness hooks in a settings file run
// from (none when the file does not exist).
func dirsOf(file string) ([]string, error) {
	doc, err := settings.Read(file)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, nil
	}
	return settings.Dirs(doc, file)
}

func holdsOurs(dir string) bool {
	for _, p := range append(Programs(), Registry) {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			return true
		}
	}
	return false
}

// makeDir creates dir and its parents, journaling the topmost one it made.
func (r *run) makeDir(dir string) error {
	top := ""
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		top = d
		if filepath.Dir(d) == d {
			break
		}
	}
	if top == "" {
		return nil
	}
	r.journal = append(r.journal, entry{path: top})
	return os.MkdirAll(dir, 0o755)
}

// save journals path before it is replaced: its content is kept aside
// until the run succeeds (nothing to keep when it does not exist).
func (r *run) save(path string) error {
	if _, err := os.Lstat(path); err != nil {
		r.journal = append(r.journal, entry{path: path})
		return nil
	}
	saved := fmt.Sprintf("%s.old.%d", path, os.Getpid())
	if err := os.Link(path, saved); err != nil {
		if err := copyPath(path, saved, 0o755); err != nil {
			return err
		}
	}
	r.journal = append(r.journal, entry{path: path, saved: saved})
	return nil
}

// copyFile replaces dst with src in one rename (a running hook keeps its
// file), journaled.
func (r *run) copyFile(src, dst string) error {
	if err := r.save(dst); err != nil {
		return err
	}
	return copyPath(src, dst, 0o755)
}

// copySkill replaces the skill directory with this version's skill and
// marks it as the installer's.
func (r *run) copySkill() error {
	if err := r.makeDir(filepath.Dir(r.skillDir)); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp.%d", r.skillDir, os.Getpid())
	r.journal = append(r.journal, entry{path: tmp})
	var src fs.FS
	root := "."
	if r.SkillFrom != "" {
		src = os.DirFS(r.SkillFrom)
	} else {
		src, root = r.Skill, "harness"
	}
	if err := copyTree(src, root, tmp); err != nil {
		return err
	}
	note := fmt.Sprintf("This copy of the harness skill was installed by %s;\n%s --uninstall removes it.\n", r.installer(), r.Rerun)
	if err := os.WriteFile(filepath.Join(tmp, SkillMarker), []byte(note), 0o644); err != nil {
		return err
	}
	if _, err := os.Lstat(r.skillDir); err == nil {
		saved := fmt.Sprintf("%s.old.%d", r.skillDir, os.Getpid())
		if err := os.Rename(r.skillDir, saved); err != nil {
			return err
		}
		r.journal = append(r.journal, entry{path: r.skillDir, saved: saved})
	} else {
		r.journal = append(r.journal, entry{path: r.skillDir})
	}
	return os.Rename(tmp, r.skillDir)
}

// installer names who installed, for the skill's marker.
func (r *run) installer() string {
	if r.Name == "install.sh" && r.SkillFrom != "" {
		return filepath.Join(filepath.Dir(filepath.Dir(r.SkillFrom)), "install.sh")
	}
	return r.Name
}

// sameSkill reports whether the skill in place has this version's files
// (the marker aside).
func (r *run) sameSkill() bool {
	var src fs.FS
	root := "."
	if r.SkillFrom != "" {
		src = os.DirFS(r.SkillFrom)
	} else {
		src, root = r.Skill, "harness"
	}
	want := map[string]string{}
	fs.WalkDir(src, root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := fs.ReadFile(src, p)
			rel, _ := filepath.Rel(root, p)
			want[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	got := map[string]string{}
	filepath.WalkDir(r.skillDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != SkillMarker {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(r.skillDir, p)
			got[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	if len(want) != len(got) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// rollback undoes the journal, last change first.
func (r *run) rollback() {
	for i := len(r.journal) - 1; i >= 0; i-- {
		e := r.journal[i]
		os.RemoveAll(e.path)
		if e.saved != "" {
			os.Rename(e.saved, e.path)
		}
	}
	r.journal = nil
}

// forget drops the copies of what a successful run replaced.
func (r *run) forget() {
	for _, e := range r.journal {
		if e.saved != "" {
			os.RemoveAll(e.saved)
		}
	}
	r.journal = nil
}

// isHarnessSkill reports whether dir holds a skill named harness.
func isHarnessSkill(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "SKILL.md"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 0; i < 10 && sc.Scan(); i++ {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "name:"); ok && strings.Trim(strings.TrimSpace(v), `"`) == "harness" {
			return true
		}
	}
	return false
}

// unwritable says why dir cannot be created or written in, "" when it can.
func unwritable(dir string) string {
	d := dir
	for {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		if filepath.Dir(d) == d {
			break
		}
		d = filepath.Dir(d)
	}
	fi, err := os.Stat(d)
	if err != nil || !fi.IsDir() {
		return d + " is not a directory"
	}
	probe, err := os.CreateTemp(d, ".harness-install-probe-*")
	if err != nil {
		return "no permission to write in " + d
	}
	probe.Close()
	os.Remove(probe.Name())
	return ""
}

// copyPath replaces dst with a copy of src in one rename, with mode.
func copyPath(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := atomicfile.Replace(dst, data, mode); err != nil {
		return err
	}
	return os.Chmod(dst, mode) // whatever the umask
}

func copyTree(src fs.FS, root, dst string) error {
	return fs.WalkDir(src, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.FromSlash(p))
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

func readLines(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}

// installedVersion is the version installed in dir: its version file, else
// what its harness says, "" when there is none.
func installedVersion(dir string) string {
	if data, err := os.ReadFile(filepath.Join(dir, VersionFile)); err == nil {
		return strings.TrimSpace(string(data))
	}
	exe := filepath.Join(dir, Programs()[0])
	if _, err := os.Stat(exe); err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "version").Output()
	if err != nil {
		return "an earlier version"
	}
	// "harness VERSION (commit …, os/arch)": the word after harness.
	if f := strings.Fields(string(out)); len(f) >= 2 && f[0] == "harness" {
		return f[1]
	}
	return "an earlier version"
}

func writeVersion(dir, version string) {
	if version != "" {
		atomicfile.Replace(filepath.Join(dir, VersionFile), []byte(version+"\n"), 0o644)
	}
}

func onPath(dir string) bool {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.Clean(d) == dir {
			return true
		}
	}
	return false
}

// stepErr reports a failure during step.
func stepErr(step string, err error) error {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return err
	}
	return failure.Wrap(failure.EnvSetup, err, "%s: %v", step, err)
}

// withSuffix adds text to the message of err.
func withSuffix(err error, text string) error {
	var fe *failure.Error
	if errors.As(err, &fe) {
		c := *fe
		c.Message += text
		return &c
	}
	return fmt.Errorf("%w%s", err, text)
}

// text renders err as the harness prints errors: the ERROR line, then its
// hint.
func text(err error) string {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return fe.Text()
	}
	return err.Error()
}
