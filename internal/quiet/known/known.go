// Package known ends a hook that does nothing unless it finds a state root
// or the record knows a project whose tasks file is gone, before the rest of
// its program is initialised, where neither is so for any place it looks in
// (internal/quiet). A hook's main imports it for that effect alone.
package known

import (
	"syscall"

	"github.com/harness-agent/harness/internal/quiet"
)

func init() {
	if quiet.Off(quiet.Known) {
		syscall.Exit(0)
	}
}
