//go:build !windows

package lock

import (
	"errors"
	"os"
	"syscall"
)

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// openLock opens the lock file at path with flag. O_NONBLOCK: an open
// never waits (a FIFO put in the lock's place), and os.OpenFile spends no
// system calls switching a regular file to non-blocking and back around a
// poller registration the kernel refuses; flock ignores the flag.
func openLock(path string, flag int) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0o666)
}

// flock applies how to f's descriptor, as f.Fd() would without putting f
// back in blocking mode (two more system calls) first.
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = syscall.Flock(int(fd), how) }); err != nil {
		return err
	}
	return ferr
}

// tryLock takes an exclusive flock on f without waiting.
func tryLock(f *os.File) error { return flock(f, syscall.LOCK_EX|syscall.LOCK_NB) }

// waitLock takes an exclusive flock on f, waiting as long as it takes (a
// signal's interruption is not an answer).
func waitLock(f *os.File) error {
	for {
		err := flock(f, syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func funlock(f *os.File) { flock(f, syscall.LOCK_UN) }

// busy reports whether tryLock failed only because another holds the lock.
func busy(err error) bool {
	return errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR)
}
