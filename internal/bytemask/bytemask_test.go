package bytemask

import (
	"math/rand/v2"
	"testing"
)

// check compares the masks of s with ones found a byte at a time.
func check(t testing.TB, cl *Classes, s []byte) {
	t.Helper()
	got := cl.Masks(s, nil)
	if want := (len(s) + 63) / 64 * Stride; len(got) != want {
		t.Fatalf("len %d: %d words, want %d", len(s), len(got), want)
	}
	for i, c := range s {
		for j, x := range cl.bytes {
			if bit := got[i/64*Stride+j] >> (i % 64) & 1; (bit == 1) != (c == x) {
				t.Fatalf("len %d: byte %d (%q), class %q: bit %d", len(s), i, c, x, bit)
			}
		}
	}
	// Nothing is set past the end.
	for k := 0; k*64 < len(s); k++ {
		for j := range 2 {
			if n := len(s) - k*64; n < 64 && got[k*Stride+j]>>n != 0 {
				t.Fatalf("len %d: class %d has bits past the end", len(s), j)
			}
		}
	}
	var want []uint64
	want = make([]uint64, len(got))
	masksGo(cl, s, want)
	for k := range got {
		if got[k] != want[k] {
			t.Fatalf("len %d: word %d is %#x, the byte loop's %#x", len(s), k, got[k], want[k])
		}
	}
}

// TestMasks checks every length to 300 at every offset in a buffer of
// random bytes, rich in the bytes sought, and reused output.
func TestMasks(t *testing.T) {
	cl := New(' ', '"')
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 400)
	for i := range buf {
		buf[i] = " \"\\a\x00\xff"[rng.IntN(6)]
	}
	out := make([]uint64, 0, 64)
	for off := 0; off < 80; off++ {
		for n := 0; off+n <= len(buf) && n <= 300; n++ {
			check(t, cl, buf[off:off+n])
			// Reused memory holds old masks: they are overwritten.
			out = cl.Masks(buf[off:off+n], out)
		}
	}
}

// FuzzMasks checks the masks of any text and classes against the byte
// loop's.
func FuzzMasks(f *testing.F) {
	f.Add([]byte(`https 2024-10-10T11:55:36.020000Z "GET / HTTP/1.1" "a\"b"`), byte(' '), byte('"'))
	f.Fuzz(func(t *testing.T, s []byte, a, b byte) {
		if a == 0 || b == 0 {
			return
		}
		check(t, New(a, b), s)
	})
}
