//go:build !linux

package lock

// holder names the process holding the lock at path where the system
// lists it (Linux: holder_linux.go); elsewhere "".
func holder(path string) string { return "" }
