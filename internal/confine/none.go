//go:build !linux && !darwin

package confine

import "fmt"

// Wrap fails: this system has no OS sandbox the harness knows (Claude
// Code's own sandbox is not available on native Windows either).
func (p Policy) Wrap(argv []string) ([]string, error) {
	return nil, fmt.Errorf("%w: no OS sandbox on this system", ErrUnavailable)
}

// Tool names the program that confines commands on this system.
const Tool = "an OS sandbox"

// Hint is what to do.
const Hint = "run Claude Code under WSL2 (bubblewrap) or macOS for the sandboxed level"
