package shadow

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/safefile"
)

// Point is one checkpoint.
type Point struct {
	N       int // 1 for the newest, as `harness undo N` counts
	Seq     int // its number in the history, which only grows
	Commit  string
	Time    time.Time
	Message string // the tool call that followed it
}

// List returns the checkpoints of the state root root, newest first.
func List(stateRoot string) ([]Point, error) {
	r, err := open(stateRoot)
	if err != nil {
		return nil, err
	}
	return r.list()
}

func (r repo) list() ([]Point, error) {
	if _, err := os.Stat(filepath.Join(r.dir, "HEAD")); err != nil {
		return nil, nil
	}
	out, err := r.git(nil, "for-each-ref", "--sort=-refname", "--format=%(refname)%00%(objectname)%00%(committerdate:unix)%00%(subject)", RefPrefix)
	if err != nil {
		return nil, err
	}
	var ps []Point
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(line, "\x00", 4)
		if len(f) < 4 {
			continue
		}
		seq, err := strconv.Atoi(strings.TrimPrefix(f[0], RefPrefix))
		if err != nil {
			continue
		}
		unix, _ := strconv.ParseInt(f[2], 10, 64)
		ps = append(ps, Point{N: len(ps) + 1, Seq: seq, Commit: f[1], Time: time.Unix(unix, 0), Message: f[3]})
		if len(ps) == Keep {
			break // older ones wait for the next collection to delete them
		}
	}
	return ps, nil
}

// newest is the last checkpoint, when the head file is lost.
func (r repo) newest() (Point, bool) {
	ps, err := r.list()
	if err != nil || len(ps) == 0 {
		return Point{}, false
	}
	return ps[0], true
}

// LastError is the last failure to take a checkpoint, "" when none was
// kept.
func LastError(stateRoot string) string {
	r, err := open(stateRoot)
	if err != nil {
		return err.Error()
	}
	data, _ := safefile.ReadFile(filepath.Join(r.dir, errName), safefile.Small)
	return strings.TrimSpace(string(data))
}

// Undo is what Restore did.
type Undo struct {
	To     Point // the checkpoint restored
	Before bool  // whether the state before the undo was saved as a new checkpoint
}

// Restore makes the work tree of the state root root what it was at the
// n-th newest checkpoint (as List counts before the call), or, when path
// is not "", only path (a file or a directory, relative to root). The state
// before is saved first, as a checkpoint of its own with message, so the
// undo can be undone: the files the checkpoint does not hold are removed
// only when that one holds them, so ignored files past MaxIgnored and the
// harness's own files stay as they are.
func Restore(stateRoot string, n int, path, message string) (Undo, error) {
	r, err := open(stateRoot)
	if err != nil {
		return Undo{}, err
	}
	unlock, err := r.lock()
	if err != nil {
		return Undo{}, err
	}
	defer unlock()
	if err := r.ensure(); err != nil {
		return Undo{}, err
	}
	ps, err := r.list()
	if err != nil {
		return Undo{}, err
	}
	if len(ps) == 0 {
		return Undo{}, ErrNone
	}
	if n < 1 || n > len(ps) {
		return Undo{}, fmt.Errorf("%w %d (1 to %d are kept)", ErrNoCheckpoint, n, len(ps))
	}
	to := ps[n-1]
	if path != "" && root.IsHarnessFile(path) {
		return Undo{}, fmt.Errorf("%s is the harness's own file: checkpoints never hold it", path)
	}
	saved, _, err := r.save(message, time.Hour, look{}) // a person waits
	if err != nil {
		return Undo{}, fmt.Errorf("saving the state before the undo: %w", err)
	}
	u := Undo{To: to, Before: saved}
	if path == "" {
		_, err = r.git(nil, "read-tree", "-u", "--reset", to.Commit)
		return u, err
	}
	_, err = r.git(nil, "restore", "--source="+to.Commit, "--worktree", "--", ":(literal)"+filepath.ToSlash(path))
	if err != nil && strings.Contains(err.Error(), "did not match") {
		return u, fmt.Errorf("%w: %s is in neither checkpoint %d nor the project", ErrNoPath, path, n)
	}
	return u, err
}

// ErrNoCheckpoint is returned for an N past the checkpoints kept.
var ErrNoCheckpoint = errors.New("there is no checkpoint")

// ErrNoPath is returned when the path to restore is nowhere to be found.
var ErrNoPath = errors.New("no such path")
