// Command harness-post-tool-use-failure is Claude Code's PostToolUseFailure
// hook: the same check as harness-post-tool-use, after a tool call that
// failed (a failed command may have changed files all the same).
package main

import (
	"os"

	"github.com/harness-agent/harness/internal/guard"
	"github.com/harness-agent/harness/internal/hook"
	_ "github.com/harness-agent/harness/internal/quiet/known" // ends the process at once where the harness is off
)

func main() { os.Exit(hook.Main(hook.PostToolUseFailure, guard.After)) }
