package sessionhook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/root"
	"github.com/harness-agent/harness/internal/statecache"
)

// Runtime is a session's own bookkeeping, kept beside the state in
// <root>/.harness-runtime/session-<id>.json: what the hooks must remember between
// invocations that is not task state (the valves' counters, the reflection
// rounds, where in the log the session began). It is a harness file (inside
// a .harness- directory): never committed, never reverted, and losing it
// costs nothing worse than a fresh count.
type Runtime struct {
	SessionID string `json:"session_id"`
	Session   int    `json:"session"` // N of the session's [SESSION-N] log lines
	Source    string `json:"source,omitempty"`
	Worker    string `json:"worker,omitempty"`
	StartedAt string `json:"started_at,omitempty"`
	// LogOffset is the size of harness-progress.txt when the session began
	// its work: what follows is this session's story.
	LogOffset int64 `json:"log_offset"`
	// Excluded is set when the session started while another live session
	// held the session lock. It was told to stay out of the harness for its
	// whole life, so its hooks stay silent even after that session ends
	// (see stayOut).
	Excluded bool `json:"excluded,omitempty"`
	// Held lists the tasks this worker had in progress when the session
	// began (concurrent mode): their outcomes in the log are this session's
	// although their Starting lines are older (see readSessionLog).
	Held []string `json:"held,omitempty"`
	// Stop counts consecutive Stop blocks without progress.
	Stop Valve `json:"stop_valve"`
	// Stuck counts the turn ends without progress (see Stuck).
	Stuck Stuck `json:"stuck,omitempty"`
	// Idle counts TeammateIdle refusals without progress, per teammate.
	Idle map[string]*Valve `json:"idle_valves,omitempty"`
	// Verified is the progress fingerprint at the last verification gate
	// that passed: the gate does not run twice on the same state.
	Verified string `json:"verified,omitempty"`
	// Finished is set when this session found the work done and removed
	// .harness-active; it arms the self-reflection rounds.
	Finished bool `json:"finished,omitempty"`
	// Ending says how the run ended ("every harness task is completed", or
	// what failed), for the reflection prompt.
	Ending string `json:"ending,omitempty"`
	// ReflectLimit is the number of reflection rounds, fixed when the run
	// finished; ReflectRounds counts the rounds asked for so far.
	ReflectLimit  int  `json:"reflect_limit,omitempty"`
	ReflectRounds int  `json:"reflect_rounds,omitempty"`
	ReflectDone   bool `json:"reflect_done,omitempty"`
}

// Valve counts consecutive blocks without progress.
type Valve struct {
	Blocks      int    `json:"blocks"`
	Fingerprint string `json:"fingerprint,omitempty"`
}

// Block records one more block at progress fingerprint fp. It reports true
// when the valve opens instead: limit blocks without progress have been made
// already. Progress (a new fingerprint) starts the count again; an opened
// valve starts from zero.
func (v *Valve) Block(fp string, limit int) (open bool) {
	if fp != v.Fingerprint {
		v.Blocks, v.Fingerprint = 0, fp
	}
	if v.Blocks >= limit {
		v.Blocks = 0
		return true
	}
	v.Blocks++
	return false
}

// runtimePrefix starts every runtime file name in statecache.RuntimeDir;
// turnPrefix starts the file that records the prompt of a session's turn
// (see UserPromptSubmit).
const (
	runtimePrefix = "session-"
	turnPrefix    = "turn-"
)

// runtimeTTL is how long a runtime file left by a session that never ended
// (a crash, a kill) is kept.
const runtimeTTL = 7 * 24 * time.Hour

// RuntimePath returns the runtime file of session sessionID in the state
// root dir (see root.SessionFile).
func RuntimePath(dir, sessionID string) string {
	return root.SessionFile(dir, runtimePrefix, sessionID)
}

// ReadRuntime returns the runtime of session sessionID, or nil when it has
// none (or an unreadable one).
func ReadRuntime(dir, sessionID string) *Runtime {
	data, err := os.ReadFile(RuntimePath(dir, sessionID))
	if err != nil {
		return nil
	}
	var rt Runtime
	if json.Unmarshal(data, &rt) != nil || rt.Session < 0 {
		return nil
	}
	return &rt
}

// save writes rt atomically (temporary file, rename).
func (rt *Runtime) save(dir string) error {
	return writeJSON(RuntimePath(dir, rt.SessionID), rt)
}

// writeJSON writes v to path atomically (temporary file, rename).
func writeJSON(path string, v any) error { return atomicfile.ReplaceJSON(path, v) }

// removeRuntime deletes the runtime files of session sessionID.
func removeRuntime(dir, sessionID string) {
	os.Remove(RuntimePath(dir, sessionID))
	os.Remove(root.SessionFile(dir, turnPrefix, sessionID))
}

// pruneRuntimes removes runtime files untouched for runtimeTTL.
func pruneRuntimes(dir string, at time.Time) {
	rd := filepath.Join(dir, statecache.RuntimeDir)
	entries, err := os.ReadDir(rd)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), runtimePrefix) && !strings.HasPrefix(e.Name(), turnPrefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && at.Sub(fi.ModTime()) > runtimeTTL {
			os.Remove(filepath.Join(rd, e.Name()))
		}
	}
}
