package wiring

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/record"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/settings"
)

// Registry, in a bin directory `harness install` filled, lists the settings
// files whose hooks run from it, one a line.
const Registry = ".harness-installs"

// Where says what a check looks at.
type Where struct {
	// Projects are the project directories of the session (the project
	// directory, the state root, the work tree's top): their .claude
	// settings are read with the user's and the managed ones.
	Projects []string
	// BinDirs are install directories to check besides those the
	// registered hooks run from (the running executable's, the default).
	BinDirs []string
	// Registered: the harness's hooks are known to be registered in the
	// settings files (a hook of the session runs from them, not from a
	// plugin), so none registered is a removal.
	Registered bool
	// Verified, when not "", is a file where the check keeps the stat of
	// each executable whose digest matched, so that the next check hashes
	// only what changed since. "" hashes every time.
	Verified string
	// Verdict, when not "", starts the name of a file where the check
	// keeps what it found with the stat of every file it looked at to find
	// it (kept.go): the next check of the same places whose files all
	// have those stats returns it without reading them. The rest of the
	// name is the places' own (a worker's work tree is another place, and
	// keeps its own verdict). "" reads them every time.
	Verdict string
}

// DisablesAll is in the problem Check reports for a settings file that
// sets "disableAllHooks": Claude Code's own switch for every hook, the
// user's and other tools' too. The harness never changes it (an install
// leaves it as it is): it says which file to remove it from.
const DisablesAll = `sets "disableAllHooks": true`

// Disabled reports whether problem is one of a settings file that sets
// "disableAllHooks" (which `harness install` does not undo).
func Disabled(problem string) bool { return strings.Contains(problem, DisablesAll) }

// Check returns what undoes the harness's wiring now, one line each (none
// when it is wired as installed):
//
//   - "disableAllHooks": true in a settings file Claude Code reads;
//   - a harness hook no settings file registers, when one should: an
//     install registered the hooks in a file read here (its registry
//     says so), or some of the harness's hooks are registered and others
//     are not;
//   - an installed executable missing, or no longer the one the install's
//     manifest lists.
//
// The settings files are small and read whole; an executable is hashed
// only when its stat changed since it last matched (Where.Verified).
func Check(w Where) []string {
	key := w.key()
	kept := w.verdictFile(key)
	if problems, ok := keptVerdict(kept, key); ok {
		return problems
	}
	looked := lookedAt{}
	var problems []string
	files := SettingsFiles(w.Projects...)
	looked.stat(ManagedDropIns()) // its *.json files, as it lists them
	files = append(files, dropIns()...)
	registered := map[string]bool{}
	var dirs []string
	for _, f := range files {
		looked.stat(f)
		doc, err := safefile.ReadFile(f, settings.MaxFile)
		if err != nil {
			continue
		}
		if settings.HooksDisabled(doc) {
			problems = append(problems, fmt.Sprintf("%s %s: Claude Code runs no hook at all, the harness's included", f, DisablesAll))
		}
		for _, cmd := range ourCommands(doc) {
			registered[settings.Program(cmd)] = true
			if exe := settings.Executable(cmd); filepath.IsAbs(exe) {
				dirs = appendNew(dirs, filepath.Dir(exe))
			}
		}
	}
	for _, d := range w.BinDirs {
		if d != "" {
			dirs = appendNew(dirs, d)
		}
	}
	if missing := unregistered(registered, files, dirs, w.Registered, looked); len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("the harness hooks %s are registered in none of the settings files Claude Code reads (%s): they no longer run",
			strings.Join(missing, ", "), strings.Join(existing(files), ", ")))
	}
	v := readVerified(w.Verified)
	changed := false
	for _, d := range dirs {
		looked.stat(filepath.Join(d, Manifest))
		sums, names, ok := ReadManifest(d)
		if !ok {
			continue
		}
		for _, name := range names {
			path := filepath.Join(d, name)
			fi, err := os.Stat(path)
			looked.saw(path, fi, err)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s is missing (the install's manifest %s lists it)", path, filepath.Join(d, Manifest)))
				continue
			}
			key := record.StampOf(fi).String()
			if v[path] == key+" "+sums[name] {
				continue
			}
			got, err := fileDigest(path)
			if err != nil || got != sums[name] {
				problems = append(problems, fmt.Sprintf("%s is not the executable `harness install` put there (its SHA-256 differs from %s)", path, filepath.Join(d, Manifest)))
				delete(v, path)
				changed = true
				continue
			}
			v[path] = key + " " + sums[name]
			changed = true
		}
	}
	if changed && w.Verified != "" {
		writeVerified(w.Verified, v)
	}
	keepVerdict(kept, key, looked, problems)
	return problems
}

// unregistered lists the harness hooks that should be registered and are
// not. They should when an install's registry (in one of dirs) names one
// of the files read, or when some harness hooks are registered: hooks
// the harness registers go in together, so a partial set is a removal.
// With neither (hooks from a plugin, or no harness hooks at all) nothing
// is expected.
func unregistered(registered map[string]bool, files, dirs []string, known bool, looked lookedAt) []string {
	expected := len(registered) > 0 || known
	for _, d := range dirs {
		looked.stat(filepath.Join(d, Registry))
		data, err := safefile.ReadFile(filepath.Join(d, Registry), safefile.Small)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" && slices.Contains(files, l) {
				expected = true
			}
		}
	}
	if !expected {
		return nil
	}
	var out []string
	for _, h := range settings.Hooks {
		if !registered[h.Program] {
			out = append(out, h.Event)
		}
	}
	return out
}

// ourCommands lists the commands of the harness hooks doc registers, read
// with gjson: this runs in hooks, where encoding/json's first use costs
// more than the rest of the check. A file that is not valid JSON
// registers nothing (Claude Code cannot read it either).
func ourCommands(doc []byte) []string {
	if !gjson.ValidBytes(doc) {
		return nil
	}
	var out []string
	gjson.GetBytes(doc, "hooks").ForEach(func(_, groups gjson.Result) bool {
		groups.ForEach(func(_, g gjson.Result) bool {
			g.Get("hooks").ForEach(func(_, h gjson.Result) bool {
				if cmd := h.Get("command"); cmd.Type == gjson.String && settings.IsOurs(cmd.Str) {
					out = append(out, cmd.Str)
				}
				return true
			})
			return true
		})
		return true
	})
	return out
}

// dropIns lists the managed drop-in settings files.
func dropIns() []string {
	d := ManagedDropIns()
	if d == "" {
		return nil
	}
	matches, _ := filepath.Glob(filepath.Join(d, "*.json"))
	return matches
}

func existing(files []string) []string {
	var out []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return []string{"none exists"}
	}
	return out
}

// readVerified reads the verified stats: "path\tstat digest" lines.
func readVerified(file string) map[string]string {
	v := map[string]string{}
	if file == "" {
		return v
	}
	data, err := safefile.ReadFile(file, safefile.Small)
	if err != nil {
		return v
	}
	for _, l := range strings.Split(string(data), "\n") {
		if path, rest, ok := strings.Cut(l, "\t"); ok {
			v[path] = rest
		}
	}
	return v
}

func writeVerified(file string, v map[string]string) {
	paths := make([]string, 0, len(v))
	for p := range v {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var b bytes.Buffer
	for _, p := range paths {
		fmt.Fprintf(&b, "%s\t%s\n", p, v[p])
	}
	os.MkdirAll(filepath.Dir(file), 0o700)
	atomicfile.Replace(file, b.Bytes(), 0o600)
}

// Fresh reports whether problems differ from those last reported (kept in
// the file seen), and records them: a finding is told once, not at every
// hook, and told again when it changes or comes back after it was gone.
func Fresh(problems []string, seen string) bool {
	text := strings.Join(problems, "\n")
	sum := digest.SHA256([]byte(text))
	key := fmt.Sprintf("%x\n", sum[:8])
	if len(problems) == 0 {
		key = ""
	}
	old, _ := safefile.ReadFile(seen, safefile.Small)
	if string(old) == key {
		return false
	}
	if key == "" {
		os.Remove(seen)
		return false
	}
	os.MkdirAll(filepath.Dir(seen), 0o700)
	atomicfile.Replace(seen, []byte(key), 0o600)
	return true
}
