package settings

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/safefile"
)

// BackupSuffix names the copy of a settings file taken before we change it:
// settings.json.harness.bak holds the file as it was before the last change.
const BackupSuffix = ".harness.bak"

// MaxFile bounds a settings file the harness reads (Claude Code's are a
// few kilobytes): a file past it, or anything but a regular file (a FIFO
// whose open would wait forever), is not read.
const MaxFile = 16 << 20

// Result is what Install or Uninstall did, or would do in a dry run.
type Result struct {
	Path    string // the file edited (a symlink's target)
	Created bool   // the file did not exist before
	Removed bool   // the file, one we created, held only our entries: it was deleted
	Changes []Change
	Backup  string // the backup written; "" when none was (new file, no change, dry run)
	Before  []byte // nil when the file did not exist
	After   []byte
}

// Changed reports whether the file's content changes.
func (r *Result) Changed() bool { return len(r.Changes) > 0 }

// Install registers every hook of Hooks, running from binDir, in the
// settings file at path, creating the file and its directory if needed.
// With dryRun nothing is written.
func Install(path, binDir string, dryRun bool) (*Result, error) {
	return edit(path, dryRun, func(doc []byte, path string) ([]byte, []Change, error) {
		return Register(doc, binDir, path)
	})
}

// Uninstall removes all our entries from the settings file at path. A
// missing file stays missing. With dryRun nothing is written.
func Uninstall(path string, dryRun bool) (*Result, error) {
	return edit(path, dryRun, Unregister)
}

// Read returns the content of the settings file at path; a missing file
// reads as empty.
func Read(path string) ([]byte, error) {
	doc, err := safefile.ReadFile(path, MaxFile)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, failure.Wrap(failure.EnvSetup, err, "cannot read %s: %v", path, err)
	}
	return doc, nil
}

// edit applies fn to the file at path. A changed file is written atomically
// (temporary file, fsync, rename: a reader sees the old file or the new one,
// never a mix) after its old content was saved as the backup. A symlinked
// settings file, as dotfile managers make, is edited where it points.
//
// A file the harness created holds nothing of the user's: it gets no backup,
// and when removing our entries would leave it an empty {} it is deleted
// instead (with its directory, if that is left empty), so that an uninstall
// leaves no trace of a file the user never had. Such a file is recognised by
// what it holds (see createdByUs), not by a record kept elsewhere.
func edit(path string, dryRun bool, fn func([]byte, string) ([]byte, []Change, error)) (*Result, error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	before, err := safefile.ReadFile(path, MaxFile)
	created := os.IsNotExist(err)
	if err != nil && !created {
		return nil, failure.Wrap(failure.EnvSetup, err, "cannot read %s: %v", path, err)
	}
	after, changes, err := fn(before, path)
	if err != nil {
		return nil, err
	}
	r := &Result{Path: path, Created: created, Changes: changes, Before: before, After: after}
	if bytes.Equal(before, after) || (created && len(changes) == 0) {
		return r, nil
	}
	ours := !created && createdByUs(path, before)
	if ours && bytes.Equal(after, newFile) {
		r.Removed = true
		if dryRun {
			return r, nil
		}
		if err := os.Remove(path); err != nil {
			return nil, failure.Wrap(failure.EnvSetup, err, "cannot remove %s: %v", path, err)
		}
		os.Remove(filepath.Dir(path)) // only when that leaves it empty
		return r, nil
	}
	if dryRun {
		return r, nil
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, failure.Wrap(failure.EnvSetup, err, "cannot create %s: %v", filepath.Dir(path), err)
	}
	if !created && !ours {
		r.Backup = path + BackupSuffix
		if err := atomicfile.WriteFile(r.Backup, before, mode); err != nil {
			return nil, failure.Wrap(failure.EnvSetup, err, "cannot write the backup %s: %v", r.Backup, err).
				WithHint("%s was left as it was", path)
		}
	}
	if err := atomicfile.WriteFile(path, after, mode); err != nil {
		return nil, failure.Wrap(failure.EnvSetup, err, "cannot write %s: %v", path, err).
			WithHint("it was left as it was")
	}
	return r, nil
}

// createdByUs reports whether doc, the content of the settings file at path,
// is a file the harness created that holds only our entries: without them it
// is exactly newFile, and it has no backup beside it (every file the harness
// did not create is backed up before its first change). A user's own {} file
// is backed up when our entries go in, so it is never taken for ours.
func createdByUs(path string, doc []byte) bool {
	if _, err := os.Lstat(path + BackupSuffix); !os.IsNotExist(err) {
		return false
	}
	found, err := Parse(doc, path)
	if err != nil || len(found) == 0 {
		return false
	}
	rest, _, err := Unregister(doc, path)
	return err == nil && bytes.Equal(withoutSandbox(rest, path), newFile)
}

// Print writes what an install or uninstall (action) did to the settings
// file, or would do with dryRun, in the form `harness hooks` and
// `harness install` show it.
func (r *Result) Print(w io.Writer, action string, dryRun bool) {
	if !r.Changed() {
		if action == "install" {
			fmt.Fprintf(w, "harness hooks: %s already registers all %d hooks; nothing changed\n", r.Path, len(Hooks))
		} else {
			fmt.Fprintf(w, "harness hooks: no harness hooks in %s; nothing changed\n", r.Path)
		}
		return
	}
	what := r.Path
	if r.Created {
		what += " (new file)"
	}
	if dryRun {
		fmt.Fprintf(w, "harness hooks %s --dry-run: would change %s\n", action, what)
	} else {
		fmt.Fprintf(w, "harness hooks %s: %s\n", action, what)
	}
	for _, c := range r.Changes {
		fmt.Fprintln(w, "  "+c.String())
	}
	if r.Removed {
		verb := "deleted"
		if dryRun {
			verb = "would delete"
		}
		fmt.Fprintf(w, "%s %s: the harness created it, and nothing else is left in it\n", verb, r.Path)
	}
	switch {
	case dryRun:
		fmt.Fprintln(w, "dry run: nothing was written")
	case r.Backup != "":
		fmt.Fprintln(w, "backup of the previous file: "+r.Backup)
	}
}
