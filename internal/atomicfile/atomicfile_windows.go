//go:build windows

package atomicfile

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// writeFile does on Windows what renameio does elsewhere: os.Rename there
// is MoveFileEx with MOVEFILE_REPLACE_EXISTING, which replaces the target
// in one step on NTFS.
func writeFile(path string, data []byte, perm os.FileMode) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+strconv.FormatInt(rand.Int64(), 10))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
