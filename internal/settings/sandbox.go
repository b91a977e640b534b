package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/jsonedit"
	"github.com/harness-agent/harness/internal/safefile"
)

// Sandbox is what the harness asks of Claude Code's own OS sandbox (Seatbelt
// on macOS, bubblewrap on Linux), which confines every command the agent
// runs with its Bash tool: the sandbox on, no command let out of it, no
// session started without it, and the paths the harness trusts (its record,
// its executables, the settings files, the skill) read-only inside it. Hooks
// run outside the sandbox, so they keep writing what the agent cannot.
type Sandbox struct {
	DenyWrite  []string // absolute paths commands may not write
	AllowWrite []string // absolute paths they may (the lock directory)
}

// The settings the harness sets, with the values it wants, in the order
// they are written (names as the pinned CLI's settings schema spells them).
var sandboxFlags = []struct {
	Key  string
	Want bool
}{
	{"sandbox.enabled", true},
	{"sandbox.allowUnsandboxedCommands", false},
	{"sandbox.failIfUnavailable", true},
}

// The lists the harness adds to, and the objects that hold them.
const (
	denyWriteKey  = "sandbox.filesystem.denyWrite"
	allowWriteKey = "sandbox.filesystem.allowWrite"
)

// SandboxSuffix names the ledger kept beside a settings file: what
// `harness install --sandbox` added or replaced in it, so that --uninstall
// removes exactly that and puts back what it replaced.
const SandboxSuffix = ".harness-sandbox"

// ledger is the content of the SandboxSuffix file.
type ledger struct {
	// Set holds each setting the harness wrote: null when it added the
	// key, else the value it replaced.
	Set map[string]json.RawMessage `json:"set,omitempty"`
	// Items holds, per list, the paths the harness added to it.
	Items map[string][]string `json:"items,omitempty"`
	// Created lists the objects and lists the harness created, removed
	// again when our removals leave them empty.
	Created []string `json:"created,omitempty"`
}

func readLedger(settingsPath string) (ledger, error) {
	var l ledger
	data, err := safefile.ReadFile(settingsPath+SandboxSuffix, MaxFile)
	if os.IsNotExist(err) {
		return l, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &l)
	}
	if err != nil {
		return l, failure.Wrap(failure.Config, err, "cannot read %s: %v", settingsPath+SandboxSuffix, err).
			WithHint("it lists what --sandbox added to %s; remove the sandbox settings by hand, then the file", settingsPath)
	}
	return l, nil
}

func (l ledger) empty() bool { return len(l.Set) == 0 && len(l.Items) == 0 && len(l.Created) == 0 }

// EnableSandbox writes want into the settings file at path: the sandbox on,
// no unsandboxed fallback, no start without a sandbox, and want's paths in
// sandbox.filesystem's denyWrite and allowWrite lists; the user's other
// settings, sandbox ones included, keep their bytes. What it adds or
// replaces is recorded beside the file (SandboxSuffix). Running it again
// changes nothing. With dryRun nothing is written.
func EnableSandbox(path string, want Sandbox, dryRun bool) (*Result, error) {
	path = resolve(path)
	l, err := readLedger(path)
	if err != nil {
		return nil, err
	}
	res, err := edit(path, dryRun, func(doc []byte, path string) ([]byte, []Change, error) {
		return enableSandbox(doc, path, want, &l)
	})
	if err != nil || dryRun || !res.Changed() {
		return res, err
	}
	return res, writeLedger(path, l)
}

// DisableSandbox removes from the settings file at path what EnableSandbox
// added, and puts back what it replaced, as its ledger says; a setting the
// user changed since is theirs and stays. Without a ledger nothing changes.
func DisableSandbox(path string, dryRun bool) (*Result, error) {
	path = resolve(path)
	l, err := readLedger(path)
	if err != nil {
		return nil, err
	}
	res, err := edit(path, dryRun, func(doc []byte, path string) ([]byte, []Change, error) {
		return disableSandbox(doc, path, l)
	})
	if err != nil || dryRun || l.empty() {
		return res, err
	}
	if err := os.Remove(path + SandboxSuffix); err != nil && !os.IsNotExist(err) {
		return res, failure.Wrap(failure.EnvSetup, err, "cannot remove %s: %v", path+SandboxSuffix, err)
	}
	return res, nil
}

func resolve(path string) string {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		return target
	}
	return path
}

func writeLedger(path string, l ledger) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err == nil {
		err = atomicfile.Replace(path+SandboxSuffix, append(data, '\n'), 0o644)
	}
	if err != nil {
		return failure.Wrap(failure.EnvSetup, err, "cannot write %s: %v", path+SandboxSuffix, err)
	}
	return nil
}

// enableSandbox returns doc with want applied, its changes, and l updated
// with what was added or replaced.
func enableSandbox(doc []byte, path string, want Sandbox, l *ledger) ([]byte, []Change, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = newFile
	}
	if err := validate(doc, path); err != nil {
		return nil, nil, err
	}
	if err := sandboxShape(doc, path); err != nil {
		return nil, nil, err
	}
	if l.Set == nil {
		l.Set = map[string]json.RawMessage{}
	}
	if l.Items == nil {
		l.Items = map[string][]string{}
	}
	var changes []Change
	step := func(next []byte, err error, c Change) error {
		if err == nil && !gjson.ValidBytes(next) {
			err = jsonedit.ErrLayout // never write what we could not read back
		}
		if err != nil {
			return failure.Wrap(failure.EnvSetup, err, "cannot edit %s: %v", path, err)
		}
		doc = next
		changes = append(changes, c)
		return nil
	}
	created := func(keys ...string) {
		for _, k := range keys {
			if !gjson.GetBytes(doc, k).Exists() && !slices.Contains(l.Created, k) {
				l.Created = append(l.Created, k)
			}
		}
	}
	for _, f := range sandboxFlags {
		cur := gjson.GetBytes(doc, f.Key)
		if cur.Exists() && (cur.Type == gjson.True) == f.Want && (cur.Type == gjson.True || cur.Type == gjson.False) {
			continue
		}
		if _, ours := l.Set[f.Key]; !ours {
			if cur.Exists() {
				l.Set[f.Key] = json.RawMessage(cur.Raw)
			} else {
				l.Set[f.Key] = json.RawMessage("null")
			}
		}
		created("sandbox")
		c := Change{Op: Add, Event: "sandbox", Command: fmt.Sprintf("%s: %v", f.Key, f.Want)}
		if cur.Exists() {
			c.Op, c.Detail = Update, "was "+cur.Raw
		}
		next, err := jsonedit.Set(doc, f.Key, f.Want)
		if err := step(next, err, c); err != nil {
			return nil, nil, err
		}
	}
	for _, list := range []struct {
		key   string
		paths []string
	}{{denyWriteKey, want.DenyWrite}, {allowWriteKey, want.AllowWrite}} {
		for _, p := range list.paths {
			if slices.Contains(listOf(doc, list.key), p) {
				continue
			}
			created("sandbox", "sandbox.filesystem", list.key)
			if !slices.Contains(l.Items[list.key], p) {
				l.Items[list.key] = append(l.Items[list.key], p)
			}
			next, err := jsonedit.Set(doc, list.key+".-1", p)
			if err := step(next, err, Change{Op: Add, Event: "sandbox", Command: list.key + " " + p}); err != nil {
				return nil, nil, err
			}
		}
	}
	return doc, changes, nil
}

// disableSandbox returns doc without what l says the harness added.
func disableSandbox(doc []byte, path string, l ledger) ([]byte, []Change, error) {
	if len(bytes.TrimSpace(doc)) == 0 || l.empty() {
		return doc, nil, nil
	}
	if err := validate(doc, path); err != nil {
		return nil, nil, err
	}
	if err := sandboxShape(doc, path); err != nil {
		return nil, nil, err
	}
	var changes []Change
	step := func(next []byte, err error, c Change) error {
		if err == nil && !gjson.ValidBytes(next) {
			err = jsonedit.ErrLayout
		}
		if err != nil {
			return failure.Wrap(failure.EnvSetup, err, "cannot edit %s: %v", path, err)
		}
		doc = next
		if c.Op != "" {
			changes = append(changes, c)
		}
		return nil
	}
	for _, key := range []string{denyWriteKey, allowWriteKey} {
		for _, p := range l.Items[key] {
			i := slices.Index(listOf(doc, key), p)
			if i < 0 {
				continue
			}
			next, err := jsonedit.Remove(doc, fmt.Sprintf("%s.%d", key, i))
			if err := step(next, err, Change{Op: Remove, Event: "sandbox", Command: key + " " + p}); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, f := range sandboxFlags {
		was, ours := l.Set[f.Key]
		cur := gjson.GetBytes(doc, f.Key)
		if !ours || !cur.Exists() || (cur.Type != gjson.True && cur.Type != gjson.False) || (cur.Type == gjson.True) != f.Want {
			continue // not ours, or the user changed it since: theirs
		}
		var next []byte
		var err error
		c := Change{Op: Remove, Event: "sandbox", Command: fmt.Sprintf("%s: %v", f.Key, f.Want)}
		if string(was) == "null" {
			next, err = jsonedit.Remove(doc, f.Key)
		} else {
			next, err = jsonedit.Replace(doc, f.Key, was)
			c.Op, c.Detail = Update, "back to "+string(was)
		}
		if err := step(next, err, c); err != nil {
			return nil, nil, err
		}
	}
	// What the install created goes when nothing else is left in it, the
	// innermost first.
	for i := len(l.Created) - 1; i >= 0; i-- {
		key := l.Created[i]
		cur := gjson.GetBytes(doc, key)
		if !emptyContainer(cur) {
			continue
		}
		next, err := jsonedit.Remove(doc, key)
		if err := step(next, err, Change{}); err != nil {
			return nil, nil, err
		}
	}
	return doc, changes, nil
}

func emptyContainer(v gjson.Result) bool {
	return (v.IsObject() && len(v.Map()) == 0) || (v.IsArray() && len(v.Array()) == 0)
}

// withoutSandbox is doc with the sandbox settings the ledger beside path
// lists removed (doc itself when there is none): what the file would be
// had --sandbox never run.
func withoutSandbox(doc []byte, path string) []byte {
	l, err := readLedger(path)
	if err != nil || l.empty() {
		return doc
	}
	rest, _, err := disableSandbox(doc, path, l)
	if err != nil {
		return doc
	}
	return rest
}

// sandboxShape refuses a sandbox setting of a shape the harness would have
// to guess at: "sandbox" or "sandbox.filesystem" not an object, a list of
// paths not a list.
func sandboxShape(doc []byte, path string) error {
	for _, k := range []string{"sandbox", "sandbox.filesystem"} {
		if v := gjson.GetBytes(doc, k); v.Exists() && !v.IsObject() {
			return shapeErr(path, k, "must be an object")
		}
	}
	for _, k := range []string{denyWriteKey, allowWriteKey} {
		if v := gjson.GetBytes(doc, k); v.Exists() && !v.IsArray() {
			return shapeErr(path, k, "must be a list of paths")
		}
	}
	return nil
}

// listOf returns the strings of the list at key.
func listOf(doc []byte, key string) []string {
	var out []string
	for _, v := range gjson.GetBytes(doc, key).Array() {
		out = append(out, v.String())
	}
	return out
}

// SandboxState is what a settings document says of the sandbox.
type SandboxState struct {
	Enabled    bool     // sandbox.enabled is true
	NoFallback bool     // allowUnsandboxedCommands is false: nothing runs outside it
	Required   bool     // failIfUnavailable is true
	DenyWrite  []string // sandbox.filesystem.denyWrite
	AllowWrite []string
}

// ReadSandbox returns what doc says of the sandbox.
func ReadSandbox(doc []byte) SandboxState {
	return SandboxState{
		Enabled:    gjson.GetBytes(doc, "sandbox.enabled").Type == gjson.True,
		NoFallback: gjson.GetBytes(doc, "sandbox.allowUnsandboxedCommands").Type == gjson.False,
		Required:   gjson.GetBytes(doc, "sandbox.failIfUnavailable").Type == gjson.True,
		DenyWrite:  listOf(doc, denyWriteKey),
		AllowWrite: listOf(doc, allowWriteKey),
	}
}

// SandboxUndone says what of the sandbox `harness install --sandbox` set in
// the settings file at path (its ledger beside it) doc no longer holds: ""
// when all of it is there, or when the harness set none there.
func SandboxUndone(path string, doc []byte) string {
	l, err := readLedger(resolve(path))
	if err != nil || l.empty() {
		return ""
	}
	s := ReadSandbox(doc)
	var gone []string
	for _, f := range sandboxFlags {
		if _, set := l.Set[f.Key]; !set {
			continue
		}
		if r := gjson.GetBytes(doc, f.Key); r.Type != gjson.True && r.Type != gjson.False || r.Bool() != f.Want {
			gone = append(gone, fmt.Sprintf("%s is no longer %v", f.Key, f.Want))
		}
	}
	for _, p := range l.Items[denyWriteKey] {
		if !slices.Contains(s.DenyWrite, p) {
			gone = append(gone, p+" is no longer in "+denyWriteKey)
		}
	}
	return strings.Join(gone, "; ")
}
