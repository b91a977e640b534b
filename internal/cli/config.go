package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/state"
	"github.com/harness-agent/harness/internal/statecache"
)

var configVerb = &command{
	name:    "config",
	args:    "[KEY [VALUE | --unset]]",
	summary: "show the job's settings (session_config), one KEY, or set KEY to VALUE (checked first; --unset restores the default); setting is a person's decision: refused inside a Claude Code session",
	run:     runConfig,
}

// configKey is one member of session_config a person sets with `harness
// config`: what it takes and what it is when unset.
type configKey struct {
	name, takes, unset, means string
}

// configKeys are session_config's members, in the order
// docs/configuration.md lists them. The parser in internal/state is the
// judge of a value; this table says what to write.
var configKeys = []configKey{
	{"concurrency_mode", "exclusive or concurrent", "exclusive", "concurrent: no session lock, claims and leases per worker"},
	{"max_sessions", "a whole number (0: no limit)", "no limit", "sessions past it are told to stop"},
	{"max_tasks_per_session", "a whole number (0: no limit)", "no limit", "task outcomes after which a session may stop"},
	{"verify_on_stop", "true or false", "true", "the verification gate at each turn end"},
	{"max_reflect_iterations", "a whole number", "3", "self-reflection rounds"},
	{"max_job_minutes", "a whole number (0: no limit)", "no limit", "the job's wall-clock budget"},
	{"max_job_tokens", "a whole number (0: no limit)", "no limit", "the job's token budget"},
	{"max_session_minutes", "a whole number (0: no limit)", "no limit", "each session's wall-clock budget"},
	{"max_session_tokens", "a whole number (0: no limit)", "no limit", "each session's token budget"},
	{"stuck_turns", "a whole number", "12", "turn ends without progress before a session is called stuck"},
	{"allowed_commands", `a list of programs: go,make or ["go","make"]`, "any program", "the only programs the agent's Bash and the stored commands may run"},
	{"review", `{"enabled": true, "timeout_seconds": 300, "model": "…"}`, "off", "the reviewer for every task"},
	{"integration_branch", "a branch name", "none", "set by `harness workers`: the branch the merge queue integrates into"},
	{"integration_check", "a shell command", "none", "the project's check every completion passes too, after the task's own validation (on the merged tree with workers)"},
	{"integration_timeout_seconds", "a whole number", "1800", "bounds integration_check"},
}

func lookupKey(name string) (configKey, bool) {
	for _, k := range configKeys {
		if k.name == name {
			return k, true
		}
	}
	return configKey{}, false
}

// taskFields are the members of a task a person may mistake for a
// setting of the job, with the flag of `harness edit` that sets them.
var taskFields = map[string]string{
	"max_attempts":               "--max-attempts N",
	"priority":                   "--priority P0|P1|P2",
	"timeout":                    "--timeout SECONDS",
	"timeout_seconds":            "--timeout SECONDS",
	"validation.timeout_seconds": "--timeout SECONDS",
	"validation":                 "--validate CMD",
	"validation.command":         "--validate CMD",
	"depends_on":                 "--depends-on ID,…",
	"title":                      "--title T",
	"cleanup":                    "--cleanup CMD",
	"on_failure.cleanup":         "--cleanup CMD",
	"allowed_paths":              "--allowed-paths GLOB,…",
	"acceptance_criteria":        "--accept TEXT",
}

// unknownSetting is the error of a KEY that is not a member of
// session_config: a task's member is pointed to `harness edit`, a near miss
// to the setting it nearly names, anything else to the list.
func unknownSetting(name string) error {
	err := failure.New(failure.Usage, "unknown setting %q", name)
	if flag, ok := taskFields[name]; ok {
		return err.WithHint("%s is a task's, not a setting of the job: harness edit ID %s (every pending task: harness edit --where status=pending %s)", name, flag, flag)
	}
	names := make([]string, len(configKeys))
	for i, k := range configKeys {
		names[i] = k.name
	}
	if near := closestFlag(strings.TrimPrefix(name, "session_config."), names); near != "" {
		return err.WithHint("did you mean %s? the settings are %s", near, strings.Join(names, ", "))
	}
	return err.WithHint("the settings are %s", strings.Join(names, ", "))
}

func runConfig(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	unset := fs.Bool("unset", false, "remove KEY from session_config: its default applies")
	asJSON := fs.Bool("json", false, "print session_config as JSON")
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) > 2 || *unset && len(pos) != 1 {
		return e.fail(usageErr(c, "expected KEY VALUE, or KEY --unset"))
	}
	var key configKey
	if len(pos) > 0 {
		k, ok := lookupKey(strings.TrimPrefix(pos[0], "session_config."))
		if !ok {
			return e.fail(unknownSetting(pos[0]))
		}
		key = k
	}
	if len(pos) < 2 && !*unset {
		dir, err := e.viewRoot()
		if err != nil {
			return e.fail(err)
		}
		s, err := e.load(dir)
		if err != nil {
			return e.fail(err)
		}
		cfg := gjson.GetBytes(s.Raw(), "session_config")
		if *asJSON {
			raw := cfg.Raw
			if len(pos) == 1 {
				raw = cfg.Get(key.name).Raw
			}
			if raw == "" {
				raw = "null"
			}
			fmt.Fprintln(e.Stdout, raw)
			return ExitOK
		}
		if len(pos) == 1 {
			fmt.Fprintln(e.Stdout, showKey(key, cfg.Get(key.name)))
			fmt.Fprintf(e.Stdout, "  takes %s: harness config %s VALUE (--unset: the default)\n", key.takes, key.name)
			return ExitOK
		}
		for _, k := range configKeys {
			fmt.Fprintln(e.Stdout, showKey(k, cfg.Get(k.name)))
		}
		fmt.Fprintln(e.Stdout, "set one in your terminal with `harness config KEY VALUE`; `harness config KEY` says what it takes")
		return ExitOK
	}
	var v any
	if !*unset {
		if v, err = configValue(key, pos[1]); err != nil {
			return e.fail(err)
		}
	}
	if err := e.personOnly("config"); err != nil {
		return e.fail(err)
	}
	dir, err := e.stateRoot()
	if err != nil {
		return e.fail(err)
	}
	var was, now string
	_, err = statecache.Update(dir, func(s *state.State) error {
		was = gjson.GetBytes(s.Raw(), "session_config."+key.name).Raw
		s.SetConfig(key.name, v)
		return nil
	})
	if err != nil {
		return e.fail(err)
	}
	if v != nil {
		b, _ := json.Marshal(v)
		now = string(b)
	}
	if was == now {
		fmt.Fprintf(e.Stdout, "%s is already %s; nothing changed\n", key.name, orDefault(now, key))
		return ExitOK
	}
	progress.Append(dir, progress.Entry{Time: e.Now(), Session: progress.LastSession(dir), Type: progress.Init,
		Message: fmt.Sprintf("Config set by the user: %s=%s (was %s)", key.name, orDefault(now, key), orDefault(was, key))})
	fmt.Fprintf(e.Stdout, "%s: %s (was %s)\n", key.name, orDefault(now, key), orDefault(was, key))
	if cmd, ok := v.(string); ok && key.name == "integration_check" && strings.TrimSpace(cmd) != "" {
		// A check that fails on the project as it stands fails every
		// attempt of every task: worth a try before the next claim.
		fmt.Fprintf(e.Stdout, "every completion now passes it too, after the task's own validation: it should pass on the project as it stands (try it: sh -c %s)\n", failure.ShellArg(cmd))
	}
	return ExitOK
}

// orDefault shows a JSON value of key, or its default when it is unset.
func orDefault(raw string, k configKey) string {
	if raw == "" {
		return "the default (" + k.unset + ")"
	}
	return compact(raw)
}

// compact is a JSON value on one line.
func compact(raw string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(raw)) != nil {
		return raw
	}
	return b.String()
}

// showKey is one line of `harness config`.
func showKey(k configKey, v gjson.Result) string {
	val := "(unset: " + k.unset + ")"
	if v.Exists() {
		val = compact(v.Raw)
	}
	return fmt.Sprintf("%s = %s  — %s", k.name, val, k.means)
}

// configValue reads VALUE as JSON; a value that is not JSON is a string
// (a comma-separated list for allowed_commands). Whatever it is, the
// state's parser judges it in a session_config of its own before anything
// is written, and its complaint is said with what the key takes.
func configValue(k configKey, text string) (any, error) {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		v = text
		if k.name == "allowed_commands" {
			var list []any
			for _, p := range strings.Split(text, ",") {
				if p = strings.TrimSpace(p); p != "" {
					list = append(list, p)
				}
			}
			v = list
		}
	}
	b, _ := json.Marshal(map[string]any{"version": 2, "session_config": map[string]any{k.name: v}, "tasks": []any{}})
	if _, err := state.Parse(b, "session_config"); err != nil {
		msg := err.Error()
		var fe *failure.Error
		if errors.As(err, &fe) {
			msg = fe.Message
		}
		msg = strings.TrimPrefix(msg, "session_config: ")
		return nil, failure.New(failure.Config, "%s", msg).
			WithHint("%s takes %s: harness config %s VALUE", k.name, k.takes, k.name)
	}
	return v, nil
}
