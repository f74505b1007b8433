package prefetch

import (
	"bytes"
	"testing"
	"unsafe"
)

// TestRange prefetches ranges of many lengths and alignments, including
// one that ends at the last byte of an allocation and one at address 0,
// where nothing is mapped, and checks that no memory changed.
func TestRange(t *testing.T) {
	buf := make([]byte, 1000)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	want := bytes.Clone(buf)
	for off := 0; off < 130; off++ {
		for n := 0; off+n <= len(buf); n += 1 + n/3 {
			Range(unsafe.Pointer(&buf[off]), uintptr(n))
		}
	}
	Range(unsafe.Pointer(&buf[len(buf)-1]), 1)
	Range(nil, 0)
	Range(nil, 4096)
	if !bytes.Equal(buf, want) {
		t.Error("Range changed memory")
	}
}
