// Package chunk holds the growable arrays the engine keeps per-key state
// in: indexed by a dense id, grown a fixed-size chunk at a time so that
// growing never copies (and never moves) an element, and written before
// they are read.
package chunk

import (
	"reflect"
	"unsafe"
)

// Bits is log2 of the number of elements in a chunk.
const Bits = 10

// Size is the number of elements in a chunk.
const Size = 1 << Bits

// Written returns make([]T, n) with a zero value written into every 4 KiB
// of it, for memory that is read before it is written. Reading a page
// fresh from the operating system maps the shared zero page, and the
// write after it then takes a second, copy-on-write fault whose TLB flush
// interrupts every other CPU the process runs on; writing first takes one
// plain fault a page.
func Written[T any](n int) []T {
	s := make([]T, n)
	var zero T
	for i, step := 0, max(1, 4096/int(unsafe.Sizeof(zero))); i < n; i += step {
		s[i] = zero
	}
	return s
}

// Array is a growable array of T indexed by id. The zero Array is empty;
// every element is the zero T until written.
type Array[T any] struct {
	// chunks are arrays, not slices: an element's index within one needs
	// no bounds check, and finding it one load fewer.
	chunks []*[Size]T
}

// elem returns element i (below Size) of chunk c by its address, not as
// &c[i]: that would first check c for nil by loading its first byte, and
// the chunks' first bytes, all at the same offset from an alignment as
// large as a chunk, compete for the same few sets of the CPU's caches, so
// that the check missed them on most requests. c is never nil.
func elem[T any](c *[Size]T, i uint64) *T {
	var zero T
	return (*T)(unsafe.Add(unsafe.Pointer(c), uintptr(i)*unsafe.Sizeof(zero)))
}

// At returns the element of id, growing the array to hold it.
func (a *Array[T]) At(id uint64) *T {
	c := int(id >> Bits)
	for c >= len(a.chunks) {
		a.chunks = append(a.chunks, (*[Size]T)(Written[T](Size)))
	}
	return elem(a.chunks[c], id&(Size-1))
}

// Get returns the element of id, or nil when the array never grew to it.
func (a *Array[T]) Get(id uint64) *T {
	c := int(id >> Bits)
	if c >= len(a.chunks) {
		return nil
	}
	return elem(a.chunks[c], id&(Size-1))
}

// Drop calls f on every element the array grew to, then empties it, so
// that its memory can be collected.
func (a *Array[T]) Drop(f func(*T)) {
	for _, c := range a.chunks {
		for i := range c {
			f(&c[i])
		}
	}
	a.chunks = nil
}

// Blocks is a growable array of elements of a type known only at run
// time (a struct built with reflect.StructOf, say), handed out as
// unsafe.Pointers. The chunks are allocated as arrays of that type, so the
// garbage collector sees the pointers the elements hold, and scans nothing
// when they hold none.
type Blocks struct {
	typ    reflect.Type
	size   uintptr
	chunks []unsafe.Pointer
}

// NewBlocks returns an empty array of elements of type t. The zero Blocks
// may not be used.
func NewBlocks(t reflect.Type) Blocks {
	return Blocks{typ: reflect.ArrayOf(Size, t), size: t.Size()}
}

// At returns the element of id, growing the array to hold it.
func (b *Blocks) At(id uint32) unsafe.Pointer {
	c := int(id >> Bits)
	if c >= len(b.chunks) || b.chunks[c] == nil {
		b.grow(c)
	}
	return unsafe.Add(b.chunks[c], uintptr(id&(Size-1))*b.size)
}

// Get returns the element of id, or nil when the array never grew to it.
func (b *Blocks) Get(id uint32) unsafe.Pointer {
	c := int(id >> Bits)
	if c >= len(b.chunks) || b.chunks[c] == nil {
		return nil
	}
	return unsafe.Add(b.chunks[c], uintptr(id&(Size-1))*b.size)
}

func (b *Blocks) grow(c int) {
	if c >= len(b.chunks) {
		b.chunks = append(b.chunks, make([]unsafe.Pointer, c+1-len(b.chunks))...)
	}
	p := reflect.New(b.typ).UnsafePointer()
	// Write a zero byte into every page, as Written does.
	for off := uintptr(0); off < b.typ.Size(); off += 4096 {
		*(*byte)(unsafe.Add(p, off)) = 0
	}
	b.chunks[c] = p
}

// Size returns the size of one element in bytes.
func (b *Blocks) Size() uintptr { return b.size }
