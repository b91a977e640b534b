package shellscan

import (
	"mvdan.cc/sh/v3/syntax"
)

// state is what the shell remembers between statements that matters here.
// Branches get clones; where control flow joins, states are merged so every
// directory a later relative path might be resolved against is kept.
type state struct {
	dirs []field           // candidate working directories
	vars map[string]string // variables with a known literal value
	// shapes are variables whose value is not known but whose form is
	// ("$(mktemp)": a fresh name in a temporary directory).
	shapes map[string]field
	funcs  map[string]*syntax.Stmt
	stack  [][]field // pushd stack
	// shared maps belong to another state too and must be copied before
	// they are changed.
	shared bool
}

// res is the state after a command when it succeeded (ok) and whatever its
// outcome (any); they differ after a cd, which matters for "cd x && …".
type res struct{ ok, any *state }

func (s *state) clone() *state {
	c := *s
	c.dirs = append([]field(nil), s.dirs...)
	c.stack = append([][]field(nil), s.stack...)
	c.shared, s.shared = true, true
	return &c
}

func (s *state) own() {
	if !s.shared {
		return
	}
	vars := make(map[string]string, len(s.vars))
	for k, v := range s.vars {
		vars[k] = v
	}
	funcs := make(map[string]*syntax.Stmt, len(s.funcs))
	for k, v := range s.funcs {
		funcs[k] = v
	}
	var shapes map[string]field
	if len(s.shapes) > 0 {
		shapes = make(map[string]field, len(s.shapes))
		for k, v := range s.shapes {
			shapes[k] = v
		}
	}
	s.vars, s.funcs, s.shapes, s.shared = vars, funcs, shapes, false
}

func (s *state) setVar(name, v string) {
	s.own()
	if s.vars == nil {
		s.vars = make(map[string]string)
	}
	s.vars[name] = v
	delete(s.shapes, name)
}

// setShape records that name holds a value of the form f (a dynamic field).
func (s *state) setShape(name string, f field) {
	s.forget(name)
	s.own()
	if s.shapes == nil {
		s.shapes = make(map[string]field)
	}
	f.feed, f.raw = nil, ""
	s.shapes[name] = f
}

func (s *state) shape(name string) (field, bool) {
	f, ok := s.shapes[name]
	return f, ok
}

func (s *state) forget(name string) {
	if _, ok := s.shapes[name]; ok {
		s.own()
		delete(s.shapes, name)
	}
	if v, ok := s.vars[name]; ok && v == unknownVar {
		return
	}
	s.own()
	if s.vars == nil {
		s.vars = make(map[string]string)
	}
	// An explicit unknown marker overrides the defaults of $HOME, $PWD and
	// $IFS, and tells a variable set to something unknown from one never
	// set (which a program would take from the environment).
	s.vars[name] = unknownVar
}

// hasDefault names the variables this package assumes a value for when the
// command has not set them: forgetting one must be explicit.
func hasDefault(name string) bool { return name == "HOME" || name == "PWD" || name == "IFS" }

// defaultIFS is what Bash splits unquoted expansions on unless told otherwise
// (it does not take IFS from the environment).
const defaultIFS = " \t\n"

// ifs returns the separators unquoted expansions are split on, or false
// when the command changed them in a way not known statically.
func (s *state) ifs() (string, bool) {
	v, ok := s.vars["IFS"]
	switch {
	case !ok:
		return defaultIFS, true
	case v == unknownVar:
		return "", false
	}
	return v, true
}

// unknownVar marks a variable whose value cannot be known; it is not a
// value any real assignment can produce.
const unknownVar = "\x00unknown"

func (s *state) forgetAll() {
	s.own()
	s.vars = map[string]string{"HOME": unknownVar, "PWD": unknownVar, "IFS": unknownVar}
	s.shapes = nil
}

func (s *state) lookup(a *analyzer, name string) (string, bool) {
	if v, ok := s.vars[name]; ok {
		return v, v != unknownVar
	}
	switch name {
	case "HOME":
		return a.home, a.home != ""
	case "PWD":
		return s.pwd()
	}
	return "", false
}

func (s *state) pwd() (string, bool) {
	if v, ok := s.vars["PWD"]; ok && v == unknownVar {
		return "", false
	}
	if len(s.dirs) == 1 && !s.dirs[0].dyn && s.dirs[0].text != "" {
		return s.dirs[0].text, true
	}
	return "", false
}

func (s *state) setFunc(name string, body *syntax.Stmt) {
	s.own()
	if s.funcs == nil {
		s.funcs = make(map[string]*syntax.Stmt)
	}
	s.funcs[name] = body
}

// merge joins two possible states: directories are united, variables are
// kept only where both agree.
func merge(x, y *state) *state {
	if x == y {
		return x
	}
	m := &state{}
	m.dirs = append(append([]field(nil), x.dirs...), y.dirs...)
	m.dirs = dedupeDirs(m.dirs)
	for k, v := range x.vars {
		if w, ok := y.vars[k]; ok && w == v {
			if m.vars == nil {
				m.vars = make(map[string]string)
			}
			m.vars[k] = v
		} else if hasDefault(k) {
			if m.vars == nil {
				m.vars = make(map[string]string)
			}
			m.vars[k] = unknownVar
		}
	}
	for k := range y.vars {
		if _, ok := x.vars[k]; !ok && hasDefault(k) {
			if m.vars == nil {
				m.vars = make(map[string]string)
			}
			m.vars[k] = unknownVar
		}
	}
	for k, v := range x.shapes {
		if w, ok := y.shapes[k]; ok && w == v {
			if m.shapes == nil {
				m.shapes = make(map[string]field)
			}
			m.shapes[k] = v
		}
	}
	if len(x.funcs)+len(y.funcs) > 0 {
		m.funcs = make(map[string]*syntax.Stmt, len(x.funcs)+len(y.funcs))
		for k, v := range x.funcs {
			m.funcs[k] = v
		}
		for k, v := range y.funcs {
			m.funcs[k] = v
		}
	}
	m.stack = x.stack
	return m
}

func dedupeDirs(ds []field) []field {
	out := ds[:0]
	for _, d := range ds {
		dup := false
		for _, o := range out {
			if o == d {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, d)
		}
	}
	if len(out) > maxDirs {
		return []field{unknownDir}
	}
	return out
}
