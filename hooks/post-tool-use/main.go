// Command harness-post-tool-use is Claude Code's PostToolUse hook: after
// every tool call it puts back harness files changed outside the harness
// (internal/integrity). It links only what it runs, so it starts fast;
// internal/programs lists the same entry point for the process-level tests.
package main

import (
	"os"

	"github.com/harness-agent/harness/internal/guard"
	"github.com/harness-agent/harness/internal/hook"
	_ "github.com/harness-agent/harness/internal/quiet/known" // ends the process at once where the harness is off
)

func main() { os.Exit(hook.Main(hook.PostToolUse, guard.After)) }
