//go:build !linux && !darwin

package invoker

import "runtime"

// system has no process tree to offer here: only the process's own
// environment is read.
func system() (Tree, string) { return nil, "ancestors not read on " + runtime.GOOS }
