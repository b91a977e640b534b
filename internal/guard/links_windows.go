//go:build windows

package guard

import "os"

// linked cannot be told from os.FileInfo on Windows: assume it may be, and
// let os.SameFile decide.
func linked(os.FileInfo) bool { return true }
