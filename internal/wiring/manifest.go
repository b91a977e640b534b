package wiring

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/harness-agent/harness/internal/atomicfile"
	"github.com/harness-agent/harness/internal/digest"
	"github.com/harness-agent/harness/internal/safefile"
)

// Manifest, in a bin directory `harness install` filled, lists the SHA-256
// digest of every executable it installed there, in sha256sum's format
// ("<64 hex digits>  <name>"), so `sha256sum -c .harness-manifest` checks
// them too.
const Manifest = ".harness-manifest"

// WriteManifest records the digests of programs, files in dir, in dir's
// manifest.
func WriteManifest(dir string, programs []string) error {
	var b bytes.Buffer
	for _, p := range programs {
		sum, err := fileDigest(filepath.Join(dir, p))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, p)
	}
	return atomicfile.Replace(filepath.Join(dir, Manifest), b.Bytes(), 0o644)
}

// ReadManifest returns the digests dir's manifest lists, by program name;
// ok is false when dir has no readable manifest.
func ReadManifest(dir string) (sums map[string]string, names []string, ok bool) {
	data, err := safefile.ReadFile(filepath.Join(dir, Manifest), safefile.Small)
	if err != nil {
		return nil, nil, false
	}
	sums = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		sum, name, found := strings.Cut(sc.Text(), "  ")
		if !found || len(sum) != 64 || name == "" || strings.ContainsAny(name, "/\\") {
			continue
		}
		if _, seen := sums[name]; !seen {
			names = append(names, name)
		}
		sums[name] = sum
	}
	return sums, names, true
}

// maxExecutable bounds an installed executable fileDigest hashes (the
// harness's are a few megabytes).
const maxExecutable = 1 << 30

// fileDigest is the hex SHA-256 of the file at path.
func fileDigest(path string) (string, error) {
	data, err := safefile.ReadFile(path, maxExecutable)
	if err != nil {
		return "", err
	}
	sum := digest.SHA256(data)
	return hex.EncodeToString(sum[:]), nil
}
