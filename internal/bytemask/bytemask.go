// Package bytemask finds two given bytes in a text at once, as bit
// masks: for each 64 bytes of the text, one 64-bit word per byte sought,
// bit i set where the byte at i is that byte.
//
// A log line's fields are found one after another, each search starting
// where the last field ended, so the searches form one chain of
// dependent loads: on a line of thirty fields that chain, not the bytes
// looked at, is what the time goes on. With the masks built in one pass
// over the line (sixteen bytes at a time on amd64), the field ends are
// read off the bits, and most of that chain goes.
package bytemask

// Stride is the number of words per 64 bytes of text in the masks: the
// masks of block k are words Stride*k (of the first byte) and
// Stride*k+1 (of the second).
const Stride = 2

// Classes are the two bytes to find.
type Classes struct {
	bytes [2]byte
	pats  [2][16]byte // each byte sixteen times, for the vector compare
}

// New returns the classes of the bytes a and b. Neither may be 0 (New
// panics on it, a mistake of the caller's code, not of any input): the
// last, partial block of a text is padded with zeros.
func New(a, b byte) *Classes {
	cl := &Classes{bytes: [2]byte{a, b}}
	for k, x := range cl.bytes {
		if x == 0 {
			panic("bytemask: a class of the zero byte")
		}
		for i := range cl.pats[k] {
			cl.pats[k][i] = x
		}
	}
	return cl
}

// Masks writes the masks of s into out, reusing its memory when it is
// large enough, and returns it: Stride words for each 64 bytes of s (the
// last block padded), word Stride*k+j the mask of the j-th byte in
// s[64k:64k+64].
func (cl *Classes) Masks(s []byte, out []uint64) []uint64 {
	nb := (len(s) + 63) / 64
	if cap(out) < nb*Stride {
		out = make([]uint64, nb*Stride)
	}
	out = out[:nb*Stride]
	full := len(s) / 64
	if full > 0 {
		blocks(cl, s[:full*64], out)
	}
	if full < nb {
		var tail [64]byte
		copy(tail[:], s[full*64:])
		blocks(cl, tail[:], out[full*Stride:])
	}
	return out
}

// masksGo is what blocks does, a byte at a time: for the architectures
// without a vector version, and to test the vector one against.
func masksGo(cl *Classes, s []byte, out []uint64) {
	for k := 0; k*64 < len(s); k++ {
		var m [2]uint64
		for i := 0; i < 64 && k*64+i < len(s); i++ {
			c := s[k*64+i]
			for j, x := range cl.bytes {
				if c == x {
					m[j] |= 1 << i
				}
			}
		}
		copy(out[k*Stride:], m[:])
	}
}
