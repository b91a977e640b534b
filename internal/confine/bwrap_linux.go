package confine

import (
	"fmt"
	"os/exec"
)

// Wrap returns the argument vector that runs argv confined by p:
// bubblewrap with the whole file system read-only, then the writable
// directories bound read-write over it, then the denied paths bound
// read-only over those, in that order (a later mount wins). The command
// gets its own /dev, /proc and process namespace (everything it started
// dies with it) and, unless p.Network, no network.
func (p Policy) Wrap(argv []string) ([]string, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("%w: bubblewrap (bwrap) is not installed", ErrUnavailable)
	}
	return p.bwrapArgs(bwrap, argv), nil
}

func (p Policy) bwrapArgs(bwrap string, argv []string) []string {
	args := []string{bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	if !p.Network {
		args = append(args, "--unshare-net")
	}
	for _, w := range existing(p.Write) {
		args = append(args, "--bind", w, w)
	}
	for _, d := range existing(p.Deny) {
		args = append(args, "--ro-bind", d, d)
	}
	return append(append(args, "--"), argv...)
}

// Tool names the program that confines commands on this system.
const Tool = "bubblewrap (bwrap)"

// Hint is how to install it.
const Hint = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), which Claude Code's sandbox needs too"
