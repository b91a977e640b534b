// Command harness runs the protocol's steps: see `harness help`.
package main

import (
	"os"

	"github.com/harness-agent/harness/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
