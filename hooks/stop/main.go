// Command harness-stop is Claude Code's Stop hook. It links only what it
// runs, so it starts fast; internal/programs lists the same entry point for
// the process-level tests.
package main

import (
	"os"

	"github.com/harness-agent/harness/internal/hook"
	_ "github.com/harness-agent/harness/internal/quiet/ended" // ends the process at once where the harness is off, or switched off with nothing to do
	"github.com/harness-agent/harness/internal/sessionhook"
)

func main() { os.Exit(hook.Main(hook.Stop, sessionhook.Stop)) }
