//go:build !linux

package lock

// holder names the process holding the lock at path where the system
// lists it (Linux: holder_linux.go); elsewhere "".
func holder(path string) string { return "" }

// HeldByHarness reports whether a harness process holds the lock at path,
// where the system says who holds a lock (Linux); elsewhere it cannot
// tell, and says false.
func HeldByHarness(path string) bool { return false }
