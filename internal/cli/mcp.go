package cli

import (
	"context"
	"os"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/mcp"
)

var mcpVerb = &command{
	name:    "mcp",
	args:    "",
	summary: "serve the task cycle's verbs (claim, checkpoint, validate, fail, status) as MCP tools on standard input and output: what a worker's session at the sandboxed level uses (harness workers starts it)",
	run:     runMCP,
}

// mcpToolTimeout bounds one tool call: a validation runs within it.
const mcpToolTimeout = 2 * time.Hour

func runMCP(e *Env, c *command, args []string) int {
	if err := e.parseNone(c, e.flags(c), args); err != nil {
		return e.fail(err)
	}
	exe, err := os.Executable()
	if err != nil {
		return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot find the harness executable: %v", err))
	}
	if err := (mcp.Server{Harness: exe, Timeout: mcpToolTimeout}).Serve(context.Background(), os.Stdin, e.Stdout); err != nil {
		return e.fail(failure.Wrap(failure.EnvSetup, err, "harness mcp: %v", err))
	}
	return ExitOK
}
