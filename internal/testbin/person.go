package testbin

import (
	"os/exec"
	"strings"
	"sync"

	"github.com/harness-agent/harness/internal/invoker"
)

// PersonVerbs are the harness verbs a person decides (internal/invoker):
// refused to a process whose ancestry holds a Claude Code session.
var PersonVerbs = map[string]bool{"adopt": true, "pause": true, "resume": true, "cancel": true,
	"remove": true, "install": true, "budget": true, "workers": true, "undo": true}

// testInSession reports whether this test process itself runs inside a
// Claude Code session (an agent running `go test`): then a person's verb
// started from here would be refused as the agent's.
var testInSession = sync.OnceValue(func() bool { return invoker.Detect(invoker.Options{}).InSession() })

// detachTools are the programs the detaching scripts use, found on this
// process's PATH: the command's own environment may have a PATH without
// them (a test of a machine without Go).
var detachTools = []string{"sh", "sleep", "ps", "mktemp", "cat", "mv", "rm", "tr"}

// AsPerson makes cmd run as a person's command would: when the test runs
// inside a Claude Code session, out of the test's process tree (a double
// fork, the orphan adopted by init), which is the one way out of a
// session's ancestry and is what the PERSON log line then shows ("parent
// 1 …"). cmd's environment must carry no Claude Code variable. Outside a
// session, or without the tools to detach, cmd is left as it is.
func AsPerson(cmd *exec.Cmd) *exec.Cmd {
	if !testInSession() {
		return cmd
	}
	var pairs []string
	for _, name := range detachTools {
		p, err := exec.LookPath(name)
		if err != nil || strings.ContainsRune(p, '\'') {
			return cmd
		}
		pairs = append(pairs, "@"+name+"@", "'"+p+"'")
	}
	r := strings.NewReplacer(pairs...)
	sh, _ := exec.LookPath("sh")
	args := append([]string{"-c", r.Replace(detachOuter), "outer", r.Replace(detachMiddle), r.Replace(detachOrphan), cmd.Path}, cmd.Args[1:]...)
	out := exec.Command(sh, args...)
	out.Dir, out.Env = cmd.Dir, cmd.Env
	return out
}

// detachOuter starts the middle shell, which starts the orphan and exits
// at once; then it waits for the orphan's command to finish, prints its
// output (stdout, then stderr) and exits with its status.
const detachOuter = `middle=$1 orphan=$2; shift 2
d=$(@mktemp@ -d) || exit 2
@sh@ -c "$middle" middle "$orphan" "$d" "$@"
i=0
while [ ! -f "$d/rc" ]; do
	i=$((i + 1))
	if [ "$i" -gt 24000 ]; then echo "the detached command did not finish" >&2; exit 2; fi
	@sleep@ 0.05
done
@cat@ "$d/out"
@cat@ "$d/err" >&2
rc=$(@cat@ "$d/rc")
@rm@ -rf "$d"
exit "$rc"`

const detachMiddle = `orphan=$1; shift
@sh@ -c "$orphan" orphan "$$" "$@" </dev/null >/dev/null 2>&1 &
exit 0`

// detachOrphan waits until the middle shell is gone (its parent is then
// init or the nearest subreaper), then runs the command.
const detachOrphan = `middle=$1 d=$2; shift 2
while [ "$(@ps@ -o ppid= -p $$ | @tr@ -d ' ')" = "$middle" ]; do @sleep@ 0.02; done
"$@" >"$d/out" 2>"$d/err"
echo $? >"$d/rc.tmp" && @mv@ "$d/rc.tmp" "$d/rc"`
