package cli

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/plan"
	"github.com/harness-agent/harness/internal/safefile"
)

// maxPlanFiles bounds the task files read of one directory.
const maxPlanFiles = 20000

// backlogDir is a Backlog.md directory as read: its config.yml and its
// task files.
type backlogDir struct {
	path   string // as the person named it
	config []byte
	files  []plan.File
}

// isDir reports whether path names a directory.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// readBacklogDir reads the Backlog.md directory at path (name as the
// person gave it): the backlog folder, whose tasks/ and completed/ hold
// the task files (drafts/ and archive/ hold no work to do), or a folder
// of task files itself (backlog/tasks); its config.yml (config.yaml) in
// it or the folder above, or the project's backlog.config.yml. The files
// come in the order of their ids' numbers ("back-2" before "back-10").
func readBacklogDir(path, name string) (*backlogDir, error) {
	d := &backlogDir{path: name}
	folders := []string{"."}
	if isDir(filepath.Join(path, "tasks")) {
		folders = []string{"tasks", "completed"}
	}
	for _, folder := range folders {
		entries, err := os.ReadDir(filepath.Join(path, folder))
		if err != nil {
			if folder == "completed" && os.IsNotExist(err) {
				continue
			}
			return nil, failure.Wrap(failure.Config, err, "cannot read %s: %v", filepath.Join(name, folder), err)
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(strings.ToLower(e.Name()), ".md") {
				continue
			}
			if len(d.files) == maxPlanFiles {
				return nil, failure.New(failure.Config, "%s: more than %d task files", name, maxPlanFiles)
			}
			rel := filepath.ToSlash(filepath.Join(folder, e.Name()))
			data, err := safefile.ReadFile(filepath.Join(path, folder, e.Name()), maxPlanBytes)
			if err != nil {
				return nil, failure.Wrap(failure.Config, err, "cannot read %s: %v", filepath.Join(name, rel), err)
			}
			d.files = append(d.files, plan.File{Name: rel, Data: data})
		}
	}
	if len(d.files) == 0 {
		return nil, failure.New(failure.Config, "%s is a directory without task files", name).
			WithHint("harness import reads a plan file, or a Backlog.md directory (backlog/, holding tasks/)")
	}
	slices.SortStableFunc(d.files, func(a, b plan.File) int { return naturalCompare(filepath.Base(a.Name), filepath.Base(b.Name)) })
	for _, c := range []string{"config.yml", "config.yaml", filepath.Join("..", "config.yml"), filepath.Join("..", "backlog.config.yml")} {
		if data, err := safefile.ReadFile(filepath.Join(path, c), maxPlanBytes); err == nil {
			d.config = data
			break
		}
	}
	return d, nil
}

// parse reads the directory's tasks.
func (d *backlogDir) parse() (*plan.Plan, error) {
	return plan.ParseBacklog(d.path, d.config, d.files)
}

// patch writes the verdicts into the task files whose status changes, each
// replaced whole (its mode kept), and says which it wrote, and what it
// left as it is.
func (d *backlogDir) patch(path string, verdict func(string) plan.Verdict) (changes []plan.Change, wrote, notes []string, err error) {
	changed, changes, notes, err := plan.PatchBacklog(d.path, d.config, d.files, verdict)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, f := range changed {
		at := filepath.Join(path, filepath.FromSlash(f.Name))
		mode := os.FileMode(0o644)
		if fi, err := os.Stat(at); err == nil {
			mode = fi.Mode().Perm()
		}
		if err := atomicfile.WriteFile(at, f.Data, mode); err != nil {
			return nil, wrote, notes, failure.Wrap(failure.EnvSetup, err, "cannot write %s: %v", filepath.Join(d.path, f.Name), err)
		}
		wrote = append(wrote, filepath.Join(d.path, filepath.FromSlash(f.Name)))
	}
	return changes, wrote, notes, nil
}

// naturalCompare orders names by their runs of digits as numbers and the
// rest as text: "back-2 - x.md" before "back-10 - y.md", "back-3.2"
// before "back-3.10".
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		ra, rb := run(a), run(b)
		if isDigits(ra) && isDigits(rb) {
			na, _ := strconv.ParseUint(ra, 10, 64)
			nb, _ := strconv.ParseUint(rb, 10, 64)
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
		} else if c := strings.Compare(strings.ToLower(ra), strings.ToLower(rb)); c != 0 {
			return c
		}
		a, b = a[len(ra):], b[len(rb):]
	}
	return cmp.Compare(len(a), len(b))
}

// run is s's first run of digits, or of anything else.
func run(s string) string {
	digit := unicode.IsDigit(rune(s[0]))
	for i, r := range s {
		if unicode.IsDigit(r) != digit {
			return s[:i]
		}
	}
	return s
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
