// Package rooted ends a hook that does nothing unless it finds a state root,
// on or off, before the rest of its program is initialised, where no place
// it looks in has one (internal/quiet). A hook's main imports it for that
// effect alone.
package rooted

import (
	"syscall"

	"github.com/harness-agent/harness/internal/quiet"
)

func init() {
	if quiet.Off(quiet.Rooted) {
		syscall.Exit(0)
	}
}
