package wiring

import (
	"fmt"
	"os"
)

// statKey is what must stay the same for a file to be taken as unchanged.
func statKey(fi os.FileInfo) string {
	return fmt.Sprintf("%d:%d", fi.Size(), fi.ModTime().UnixNano())
}
