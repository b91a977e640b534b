package jsonobj

import (
	"bytes"
	"os"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/safefile"
)

// WriteFile writes the JSON text data to path: over the file in place
// when the text there differs from it only as InPlace allows (a count or a
// stamp moved, as most writes of the hooks' small files do), else through
// a temporary file renamed over it (atomicfile.Replace). In place costs a
// read and a write of a few microseconds; a rename over a file costs some
// 0.15 ms on ext4, which flushes the new file's blocks first. Neither
// syncs: it is for the small files a crash may lose at no worse cost than
// a rebuild or a recount.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	if was, err := safefile.ReadFile(path, safefile.Small); err == nil {
		if bytes.Equal(was, data) {
			return nil // already so
		}
		if InPlace(was, data) && atomicfile.Patch(path, int64(len(was)), 0, was, data) {
			return nil
		}
	}
	return atomicfile.Replace(path, data, perm)
}
