// Package atomicfile replaces a file in one step: a reader sees the old
// bytes or the new ones, never a mix, and a crash leaves one or the other.
//
// The temporary file is written in the target's own directory, named
// ".<name><digits>": renameio alone would use $TMPDIR when it is on the same
// file system, and a $TMPDIR inside a project would show the half-written
// file to git (a dirty tree) and to anyone listing the project. Beside the
// target, a ".harness-…" name is a harness file.
package atomicfile

import "os"

// WriteFile writes data to path atomically, with permissions perm for a new
// file: the data goes to a temporary file beside path, is synced, and is
// renamed over path.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return writeFile(path, data, perm)
}
