// Command harness-teammate-idle is Claude Code's TeammateIdle hook. Until its policy lands it
// is a silent pass-through: it reads the payload and allows everything.
package main

import (
	"os"

	"github.com/harness-agent/harness/internal/hook"
)

func main() {
	os.Exit(hook.Main(hook.TeammateIdle, func(hook.Payload) hook.Decision { return hook.Decision{} }))
}
