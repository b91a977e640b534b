package confine

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// Wrap returns the argument vector that runs argv confined by p: macOS's
// Seatbelt (sandbox-exec) with a profile that allows everything but file
// writes outside p.Write (and inside p.Deny), and the network unless
// p.Network.
func (p Policy) Wrap(argv []string) ([]string, error) {
	se, err := exec.LookPath("sandbox-exec")
	if err != nil {
		return nil, fmt.Errorf("%w: sandbox-exec is not on PATH", ErrUnavailable)
	}
	return append([]string{se, "-p", p.profile(), "--"}, argv...), nil
}

// profile is the Seatbelt profile of p. Later rules win.
func (p Policy) profile() string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n(deny file-write*)\n")
	b.WriteString("(allow file-write* (literal \"/dev/null\") (literal \"/dev/tty\") (regex #\"^/dev/fd/\"))\n")
	for _, w := range existing(p.Write) {
		fmt.Fprintf(&b, "(allow file-write* (subpath %s))\n", strconv.Quote(w))
	}
	for _, d := range existing(p.Deny) {
		fmt.Fprintf(&b, "(deny file-write* (subpath %s))\n", strconv.Quote(d))
	}
	if !p.Network {
		b.WriteString("(deny network*)\n(allow network* (local unix))\n")
	}
	return b.String()
}

// Tool names the program that confines commands on this system.
const Tool = "Seatbelt (sandbox-exec)"

// Hint is how to get it.
const Hint = "sandbox-exec ships with macOS in /usr/bin; put /usr/bin on PATH"
