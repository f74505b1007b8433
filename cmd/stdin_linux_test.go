package cmd

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// openTerminal opens a pseudo-terminal and returns its terminal end, or
// skips the test where there is none.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, ptm.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		t.Skipf("unlocking the pseudo-terminal: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, ptm.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		t.Skipf("naming the pseudo-terminal: %v", errno)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	return pts
}

// TestNoTraceOnTerminal: with no trace named and a terminal on standard
// input, run, compare and burst say what is missing instead of waiting
// for input.
func TestNoTraceOnTerminal(t *testing.T) {
	tty := openTerminal(t)
	if !isTerminal(tty) {
		t.Fatal("the pseudo-terminal is not taken for a terminal")
	}
	for _, args := range [][]string{{"run", "--algo", "gcra"}, {"compare"}, {"burst"}} {
		var out, errb bytes.Buffer
		code := Main("test", args, tty, &out, &errb)
		want := "ratesim: " + args[0] + " needs a trace file (or - for standard input)\n"
		if code != 2 || errb.String() != want || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, stderr %q", args, code, out.String(), errb.String(), want)
		}
	}
}
