// Command harness-session-start: see internal/programs for what it runs.
package main

import (
	"os"

	"github.com/harness-agent/harness/internal/programs"
)

func main() { os.Exit(programs.Run("harness-session-start")) }
