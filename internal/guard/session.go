package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/git"
	"github.com/harness-agent/harness/internal/hook"
	"github.com/harness-agent/harness/internal/lock"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/shellscan"
	"github.com/harness-agent/harness/internal/statecache"
	"github.com/harness-agent/harness/internal/taskcycle"
)

const ruleLock = "session-lock"

// otherOwner returns the live holder of the session lock when it is not this
// session and the project is in exclusive mode.
func (c *call) otherOwner() (lock.Holder, bool) {
	h, alive, held := lock.Owner(c.Root)
	if !held || !alive || h.Same(lock.Self()) {
		return h, false
	}
	if sum, err := c.summary(); err == nil && sum.Concurrent {
		return h, false
	}
	return h, true
}

// lockCheck denies a harness mutation (op) from a session that does not own
// the project's harness.
func (c *call) lockCheck(op string) (hook.Decision, bool) {
	h, other := c.otherOwner()
	if !other {
		return hook.Decision{}, false
	}
	return deny(ruleLock, fmt.Sprintf("another harness session owns this project (pid=%d); `%s` would change its state.", h.PID, op),
		"do not work on harness tasks in this session; wait for the other session to end, or, if it is gone, start a new session (a dead owner's lock is reclaimed at session start)."), true
}

// sessionWarning tells the model, on any call, that another session owns the
// harness.
func (c *call) sessionWarning() {
	if h, other := c.otherOwner(); other {
		c.notes = append(c.notes, fmt.Sprintf("harness [%s]: WARN another harness session is active (pid=%d): do not work on harness tasks here.", ruleLock, h.PID))
	}
}

// heartbeatEvery throttles lease renewal checks.
const heartbeatEvery = time.Minute

// heartbeat renews this worker's claims in concurrent mode when less than
// half of their lease remains. It looks at most once a minute (a marker
// file's age), in either mode (a call that reads a file in exclusive mode
// would otherwise read the summary for this alone), reads only the cached
// summary, and writes the state only when a renewal is due.
func (c *call) heartbeat() {
	me := taskcycle.WorkerID()
	mark := filepath.Join(c.Root, statecache.RuntimeDir, "heartbeat-"+safeName(me))
	if fi, err := os.Lstat(mark); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) < heartbeatEvery {
		return
	}
	sum, err := c.summary()
	if err != nil {
		return
	}
	os.MkdirAll(filepath.Dir(mark), 0o755)
	safefile.Touch(mark, time.Now())
	if !sum.Concurrent {
		return
	}
	now := time.Now()
	lease := taskcycle.LeaseFromEnv()
	for _, cl := range myClaims(sum) {
		if exp, err := time.Parse(time.RFC3339, cl.LeaseExpiresAt); err != nil || exp.Sub(now) < lease/2 {
			taskcycle.In(c.Project, c.cwd).Heartbeat()
			return
		}
	}
}

// sharedGit denies destructive git commands in a work tree where another
// worker holds a live claim (concurrent mode): a rollback there would destroy
// that worker's work. The work tree is the one the git command acts on
// (after the command's cd's, git -C and --work-tree), not the hook's cwd.
func (c *call) sharedGit(rep shellscan.Report) (hook.Decision, bool) {
	type run struct {
		what string
		dirs []string
	}
	var runs []run
	for _, p := range rep.Programs {
		if p.Dynamic || p.Base() != "git" {
			continue
		}
		dirs := shellscan.GitDirs(p)
		what := ""
		if ok, why := shellscan.IsDestructiveGit(p); ok {
			what = why
		} else if w := checkoutFile(shellscan.GitCheckoutWords(p), dirs); w != "" {
			what = "git checkout " + w + " discards uncommitted changes to " + w
		}
		if what != "" {
			runs = append(runs, run{"`" + strings.Join(append([]string{p.Name}, p.Args...), " ") + "` (" + what + ")", dirs})
		}
	}
	if len(runs) == 0 {
		return hook.Decision{}, false
	}
	sum, err := c.summary()
	if err != nil || !sum.Concurrent {
		return hook.Decision{}, false
	}
	stateTree := git.NearestTop(c.Root)
	me := taskcycle.WorkerID()
	now := time.Now()
	for _, r := range runs {
		for _, dir := range r.dirs {
			here := ""
			if dir != "" {
				here = git.NearestTop(resolve(dir))
			}
			for _, cl := range sum.InProgress {
				if cl.ClaimedBy == me {
					continue
				}
				if exp, err := time.Parse(time.RFC3339, cl.LeaseExpiresAt); err == nil && now.After(exp) {
					continue
				}
				tree := cl.Worktree
				if tree == "" {
					tree = stateTree
				}
				if tree == "" || dir != "" && tree != here {
					continue
				}
				where := "in " + here
				if dir == "" {
					where = "in a directory not known statically (it may be " + tree + ")"
				}
				return deny(ruleGit, fmt.Sprintf("%s %s would destroy the work of %s, which holds a live claim on %s in that work tree.", r.what, where, cl.ClaimedBy, cl.ID),
					"work in your own git worktree (`git worktree add ../w2`, then HARNESS_STATE_ROOT pointing at the shared state); roll back your own task with `harness fail ID --category TASK_EXEC \"…\"`."), true
			}
		}
	}
	return hook.Decision{}, false
}

// checkoutFile returns the first word of a `git checkout WORD` that names an
// existing file or directory in one of dirs (so git restores it instead of
// switching branches), or "".
func checkoutFile(words, dirs []string) string {
	for _, w := range words {
		for _, d := range dirs {
			if d == "" {
				continue
			}
			p := w
			if !filepath.IsAbs(p) {
				p = filepath.Join(d, w)
			}
			if _, err := os.Lstat(p); err == nil {
				return w
			}
		}
	}
	return ""
}
