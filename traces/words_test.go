package traces

import (
	"bytes"
	"testing"
)

// TestIndexByte checks indexByte against bytes.IndexByte for every
// length up to past its words and every place of the byte, the zero
// byte (which the padding of a short word holds) included.
func TestIndexByte(t *testing.T) {
	for n := range 40 {
		for at := -1; at < n; at++ {
			for _, c := range []byte{' ', 0, 0xff} {
				s := bytes.Repeat([]byte{'a'}, n)
				if at >= 0 {
					s[at] = c
					if at+3 < n {
						s[at+3] = c // a second one after it
					}
				}
				if got, want := indexByte(s, c), bytes.IndexByte(s, c); got != want {
					t.Errorf("indexByte(%q, %q) = %d, want %d", s, c, got, want)
				}
			}
		}
	}
}

// TestIndexEither checks indexEither against bytes.IndexAny for every
// length up to past its words and every place of either byte, the zero
// byte (which the padding of a short word holds) included.
func TestIndexEither(t *testing.T) {
	for n := range 40 {
		for at := -1; at < n; at++ {
			for _, pair := range [][2]byte{{' ', '/'}, {0, ' '}, {'"', '"'}, {0xff, 0}} {
				for _, c := range pair {
					s := bytes.Repeat([]byte{'a'}, n)
					if at >= 0 {
						s[at] = c
						if at+3 < n {
							s[at+3] = pair[0] // another after it
						}
					}
					if got, want := indexEither(s, pair[0], pair[1]), min2(bytes.IndexByte(s, pair[0]), bytes.IndexByte(s, pair[1])); got != want {
						t.Errorf("indexEither(%q, %q, %q) = %d, want %d", s, pair[0], pair[1], got, want)
					}
				}
			}
		}
	}
}

// min2 is the smaller of two indexes, -1 meaning none.
func min2(a, b int) int {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

// TestAppendFraction checks appendFraction against the fraction's
// digits written one by one.
func TestAppendFraction(t *testing.T) {
	for _, width := range []int{1, 3, 6, 9, 18} {
		for _, r := range []uint64{0, 1, 5, 10, 100, 1000, 120, 123456, 999999999, 100000000, 250000000, 1000000, 17000} {
			if r >= pow10[width] {
				continue
			}
			var want []byte
			if r != 0 {
				want = append(want, '.')
				for d := pow10[width-1]; d > 0; d /= 10 {
					want = append(want, byte('0'+r/d%10))
				}
				want = bytes.TrimRight(want, "0")
			}
			if got := appendFraction([]byte("x"), r, width); string(got) != "x"+string(want) {
				t.Errorf("appendFraction(%d, %d) = %q, want %q", r, width, got, "x"+string(want))
			}
		}
	}
}
