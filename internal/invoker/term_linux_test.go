package invoker

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pseudo-terminal's far end is a terminal, named as the system names it.
func TestPtyIsTerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	var unlock int32
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock)))
	require.Zero(t, errno)
	var n uint32
	_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n)))
	require.Zero(t, errno)
	name := "/dev/pts/" + strconv.Itoa(int(n))
	pts, err := os.OpenFile(name, os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	defer pts.Close()
	ok, got := terminal(pts)
	assert.True(t, ok)
	assert.Equal(t, name, got)
}
