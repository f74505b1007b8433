// Package prefetch asks the CPU to start loading memory into its caches
// ahead of use, without waiting for it.
//
// A replay with many keys is bound by cache misses: each request's first
// touch of its key's state misses. Go has no prefetch instruction, and a
// plain load used in its place holds up the instructions after it until
// the load returns, so it can only overlap misses with other misses. A
// prefetch retires at once, so the misses of the next rows overlap with
// the work on this one. On architectures without an implementation here,
// Range does nothing, which is always correct: a prefetch is only a hint.
package prefetch

import "unsafe"

// Range starts loading every cache line of the n bytes at p into the
// caches. p need not be aligned. It never faults, whatever p is, and it
// changes no memory.
func Range(p unsafe.Pointer, n uintptr) {
	if n > 0 {
		lines(uintptr(p)&^(lineSize-1), (uintptr(p)+n-1)&^(lineSize-1))
	}
}

// lineSize is the cache line size prefetches step by. Where lines are
// larger, some prefetches repeat one; where smaller, which none of Go's
// 64-bit platforms has, some lines would be missed.
const lineSize = 64
