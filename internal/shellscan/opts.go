package shellscan

import "strings"

// optSpec describes a program's command line closely enough to tell its
// options from its operands. It is not a full getopt: it only has to get
// right which words are file operands.
type optSpec struct {
	arg    string   // short options that take a value (-t DIR, -tDIR)
	optArg string   // short options with an optional attached value (sed -i.bak)
	long   []string // long options that take a value (--target-directory DIR)
	stop   bool     // options end at the first operand: the rest is a command
	// digits makes "-NUM" an option (nice -10, head -5) rather than flags.
	digits bool
}

type opt struct {
	name   string
	val    field
	hasVal bool
}

type parsed struct {
	opts []opt
	pos  []field
}

func parseArgs(args []field, sp optSpec) parsed {
	var p parsed
	for i := 0; i < len(args); i++ {
		f := args[i]
		t := f.text
		if f.dyn && !strings.HasPrefix(t, "-") {
			p.pos = append(p.pos, f)
			if sp.stop {
				p.pos = append(p.pos, args[i+1:]...)
				return p
			}
			continue
		}
		switch {
		case t == "--":
			p.pos = append(p.pos, args[i+1:]...)
			return p
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t[2:], "=")
			o := opt{name: name}
			if eq {
				o.val, o.hasVal = sub(f, len(t)-len(val)), true
			} else if matchLong(name, sp.long) && i+1 < len(args) {
				i++
				o.val, o.hasVal = args[i], true
			}
			p.opts = append(p.opts, o)
		case len(t) > 1 && t[0] == '-':
			if sp.digits && isDigits(t[1:]) {
				p.opts = append(p.opts, opt{name: "#", val: lit(t[1:]), hasVal: true})
				continue
			}
			for j := 1; j < len(t); j++ {
				c := t[j]
				name := t[j : j+1]
				if strings.IndexByte(sp.arg, c) >= 0 {
					o := opt{name: name, hasVal: true}
					if j+1 < len(t) {
						o.val = sub(f, j+1)
					} else if i+1 < len(args) {
						i++
						o.val = args[i]
					} else {
						o.hasVal = false
					}
					p.opts = append(p.opts, o)
					break
				}
				if strings.IndexByte(sp.optArg, c) >= 0 {
					o := opt{name: name}
					if j+1 < len(t) {
						o.val, o.hasVal = sub(f, j+1), true
					}
					p.opts = append(p.opts, o)
					break
				}
				p.opts = append(p.opts, opt{name: name})
			}
		default:
			p.pos = append(p.pos, f)
			if sp.stop {
				p.pos = append(p.pos, args[i+1:]...)
				return p
			}
		}
	}
	return p
}

// sub is the part of an option word from byte i on, as a field of its own
// (the value of -tDIR or --target-directory=DIR).
func sub(f field, i int) field {
	if i > len(f.text) {
		return lit("")
	}
	if !f.dyn {
		return lit(f.text[i:])
	}
	return field{text: f.text[i:], pat: string(wildAny), dyn: true}
}

// matchLong accepts unambiguous abbreviations the way getopt_long does
// (--in-pl for --in-place), since they are an easy way to dodge an exact
// match; three letters are required to keep false positives down.
func matchLong(name string, names []string) bool {
	for _, n := range names {
		if name == n || (len(name) >= 3 && strings.HasPrefix(n, name)) {
			return true
		}
	}
	return false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// has reports whether any of the named options was given. Single letters
// name short options, longer names long ones (abbreviations accepted).
func (p *parsed) has(names ...string) bool {
	for _, o := range p.opts {
		if optIs(o.name, names) {
			return true
		}
	}
	return false
}

// vals returns the values given to any of the named options.
func (p *parsed) vals(names ...string) []field {
	var out []field
	for _, o := range p.opts {
		if o.hasVal && optIs(o.name, names) {
			out = append(out, o.val)
		}
	}
	return out
}

func (p *parsed) opt(names ...string) (opt, bool) {
	for i := len(p.opts) - 1; i >= 0; i-- {
		if optIs(p.opts[i].name, names) {
			return p.opts[i], true
		}
	}
	return opt{}, false
}

func optIs(name string, names []string) bool {
	for _, n := range names {
		if name == n || (len(n) > 1 && len(name) >= 3 && strings.HasPrefix(n, name)) {
			return true
		}
	}
	return false
}
