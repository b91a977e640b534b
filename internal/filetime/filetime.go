// Package filetime reads a file's change and modification times from the
// system's stat, whose fields each system names its own way (Linux and
// the BSDs that follow it: Ctim, Mtim; macOS, FreeBSD and NetBSD:
// Ctimespec, Mtimespec). It imports only syscall, so that internal/quiet,
// which ends a hook before the rest is initialised, can use it too.
package filetime
