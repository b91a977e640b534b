package invoker

import (
	"encoding/binary"
	"strings"
)

// procArgs reads the answer of macOS's kern.procargs2 sysctl: argc (a
// 32-bit integer in the machine's order, little-endian on every Mac the
// harness builds for), the executable's path, NUL padding, argc arguments,
// then the environment, each NUL-terminated.
func procArgs(b []byte) (args, env []string) {
	if len(b) < 4 {
		return nil, nil
	}
	argc := int(int32(binary.LittleEndian.Uint32(b)))
	rest := string(b[4:])
	i := strings.IndexByte(rest, 0)
	if i < 0 || argc < 0 {
		return nil, nil
	}
	rest = strings.TrimLeft(rest[i:], "\x00")
	args = []string{}
	for len(rest) > 0 && len(args) < argc {
		s, r, _ := strings.Cut(rest, "\x00")
		args, rest = append(args, s), r
	}
	env = []string{}
	for len(rest) > 0 {
		s, r, _ := strings.Cut(rest, "\x00")
		if s == "" {
			break
		}
		env, rest = append(env, s), r
	}
	return args, env
}
