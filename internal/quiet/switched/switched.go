// Package switched ends a hook that does nothing unless the state root it
// finds is switched on, before the rest of its program is initialised,
// where no place it looks in has the marker (internal/quiet). A hook's main
// imports it for that effect alone.
package switched

import (
	"syscall"

	"github.com/harness-agent/harness/internal/quiet"
)

func init() {
	if quiet.Off(quiet.Switched) {
		syscall.Exit(0)
	}
}
