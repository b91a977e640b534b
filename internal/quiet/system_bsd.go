//go:build darwin || freebsd || netbsd

package quiet

// realPath is name where no link lies on its way (realPathByLinks): these
// kernels name no open directory's path the way Linux's /proc does, and a
// path with a link on it is left to the hook.
func realPath(name string) (real string, found, ok bool) { return realPathByLinks(name) }
