package traces

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// The readers look at eight bytes of a line at a time where that pays:
// finding a CSV line's commas, and the ends of a log line's short
// fields. These are the word operations they share.

// wordAt returns the eight bytes of line from i on as a little-endian word,
// with zero bytes (neither comma nor quote) past the end of line.
func wordAt(line []byte, i int) uint64 {
	switch rest := len(line) - i; {
	case rest >= 8:
		return binary.LittleEndian.Uint64(line[i:])
	case len(line) >= 8:
		// The last eight bytes, shifted so that line[i] is the low byte.
		return binary.LittleEndian.Uint64(line[len(line)-8:]) >> (8 * (8 - rest))
	default:
		var w uint64
		for k := range rest {
			w |= uint64(line[i+k]) << (8 * k)
		}
		return w
	}
}

// ones has a one in every byte.
const ones = 0x0101010101010101

// zeroBytes returns w with the high bit of each zero byte set and every
// other bit clear. Unlike the usual (w-ones)&^w trick it is exact: no
// borrow runs from one byte into the next.
func zeroBytes(w uint64) uint64 {
	const low7 = 0x7f * ones
	return ^((w&low7 + low7) | w | low7)
}

// indexByte returns the index of the first c in s, or -1, as
// bytes.IndexByte does. Most fields of a log line are short, and for them
// the set-up of bytes.IndexByte's vector search costs more than the
// search: indexByte looks at the first 8 bytes as one word, and leaves
// only what is past them to bytes.IndexByte.
func indexByte(s []byte, c byte) int {
	if len(s) >= 8 {
		if k := indexInWord(s, uint64(c)*ones); k >= 0 {
			return k
		}
		if k := bytes.IndexByte(s[8:], c); k >= 0 {
			return 8 + k
		}
		return -1
	}
	return bytes.IndexByte(s, c)
}

// indexInWord returns the index of the first byte of cw (a byte in
// every byte) in the first eight bytes of s, which has them; -1 when
// none is there. It is indexByte's first step, small enough to inline
// where a call would cost more than the search.
func indexInWord(s []byte, cw uint64) int {
	if m := zeroBytes(binary.LittleEndian.Uint64(s) ^ cw); m != 0 {
		return bits.TrailingZeros64(m) / 8
	}
	return -1
}

// indexEitherInWord is indexInWord of two bytes: the index of the
// first byte of aw or of bw in the first eight bytes of s; -1 when
// neither is there.
func indexEitherInWord(s []byte, aw, bw uint64) int {
	w := binary.LittleEndian.Uint64(s)
	if m := zeroBytes(w^aw) | zeroBytes(w^bw); m != 0 {
		return bits.TrailingZeros64(m) / 8
	}
	return -1
}

// indexEither returns the index of the first a or b in s, or -1. It
// finds the end of a word, a value that may hold no space, before the
// literal after it, and a space inside the word, in one pass: eight
// bytes at a time, as words are short.
func indexEither(s []byte, a, b byte) int {
	wa, wb := uint64(a)*ones, uint64(b)*ones
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		if m := zeroBytes(w^wa) | zeroBytes(w^wb); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	if rest := len(s) - i; rest > 0 {
		// The last bytes, the ones past the end (zero in wordAt's word)
		// masked out.
		w := wordAt(s, i)
		if m := (zeroBytes(w^wa) | zeroBytes(w^wb)) & (1<<(8*rest) - 1); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return -1
}
