// Command harness-session-start is Claude Code's SessionStart hook. It links only what it
// runs, so it starts fast; internal/programs lists the same entry point for
// the process-level tests.
package main

import (
	"os"

	"github.com/harness-agent/harness/internal/gitobj"
	"github.com/harness-agent/harness/internal/hook"
	_ "github.com/harness-agent/harness/internal/quiet/settled" // ends the process at once where the harness is off, or switched off and settled
	"github.com/harness-agent/harness/internal/sessionhook"
)

func main() {
	sessionhook.ReadHead = gitobj.HeadLine
	os.Exit(hook.Main(hook.SessionStart, sessionhook.SessionStart))
}
