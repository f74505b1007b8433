// Package keyhash hashes the keys of rate limiters for sharding and hash
// tables: the engine's workers and interners, and limiters.Keyed's shards.
package keyhash

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Sum hashes a key: its low bits spread keys over shards or workers, its
// high bits over the slots of a table.
// Keys are short, so a word-at-a-time multiply-mix beats a general hash's
// call overhead; the result only places keys and never decides anything,
// so a trace that collides many keys is slower, never wrong.
func Sum(b []byte) uint64 {
	const (
		m1 = 0xa0761d6478bd642f
		m2 = 0xe7037ed1a0b428db
	)
	key, n := b, len(b)
	h := uint64(n) * m1
	for len(b) >= 8 {
		hi, lo := bits.Mul64(h^binary.LittleEndian.Uint64(b), m2)
		h = hi ^ lo
		b = b[8:]
	}
	if len(b) > 0 {
		// The last 1 to 7 bytes, read without a loop: for a given length
		// (mixed in above) each read covers every byte, so keys that differ
		// anywhere still differ here.
		var tail uint64
		switch r := len(b); {
		case n >= 8:
			tail = binary.LittleEndian.Uint64(key[n-8:]) // overlaps the last word
		case r >= 4:
			tail = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[r-4:]))<<32
		default:
			tail = uint64(b[0]) | uint64(b[r/2])<<8 | uint64(b[r-1])<<16
		}
		hi, lo := bits.Mul64(h^tail, m2)
		h = hi ^ lo
	}
	hi, lo := bits.Mul64(h^m1, m2)
	return hi ^ lo
}

// String is Sum of the bytes of s, without copying them.
func String(s string) uint64 {
	return Sum(unsafe.Slice(unsafe.StringData(s), len(s)))
}
