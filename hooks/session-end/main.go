// Command harness-session-end is Claude Code's SessionEnd hook. Until its policy lands it
// is a silent pass-through: it reads the payload and allows everything.
package main

import (
	"os"

	"github.com/harness-agent/harness/internal/hook"
)

func main() {
	os.Exit(hook.Main(hook.SessionEnd, func(hook.Payload) hook.Decision { return hook.Decision{} }))
}
