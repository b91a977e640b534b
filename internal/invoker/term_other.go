//go:build !linux && !windows && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package invoker

import "os"

// terminal cannot ask a terminal driver here: no standard input is taken
// for a terminal.
func terminal(f *os.File) (ok bool, name string) { return false, "" }
