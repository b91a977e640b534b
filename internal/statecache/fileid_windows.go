//go:build windows

package statecache

import "os"

// fileID is empty on Windows, where os.FileInfo carries no file index: the
// key is the size and the modification time.
func fileID(os.FileInfo) string { return "" }
