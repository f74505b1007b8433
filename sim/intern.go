package sim

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/ratesim/ratesim/internal/chunk"
	"github.com/ratesim/ratesim/internal/keyhash"
	"github.com/ratesim/ratesim/internal/prefetch"
)

// interner maps keys to dense ids 0, 1, 2, ... for one worker.
//
// It is an open-addressing hash table over the 64-bit hashes the reader
// already computed. A slot is eight bytes, the high half of the key's hash
// and its id, so that the table costs little per key however long the
// keys: with millions of keys live at once, bytes per key are what limit
// a replay. An id's ref (see idEntry) holds a key of up to seven bytes
// itself, and says for a longer one where in a chunked arena its bytes
// are, stored once after their length. Looking a key up is then two
// dependent loads (its slot, its ref), and for a long key a third (its
// bytes), each a cache miss when the keys outnumber the cache: the caller
// prefetches each well before it needs the next (see worker.step), so
// that the misses of a batch overlap instead of following one another as
// in a Go map.
//
// Keys can be removed: their ids are reused, and the arena is compacted
// when most of it holds removed keys.
type interner struct {
	slots []internSlot         // at most 3/4 full
	n     int                  // keys held
	perID chunk.Array[idEntry] // per id, its key and latest time
	nids  int                  // one past the largest id given out
	free  []uint32             // ids to reuse
	arena [][]byte             // chunks of long keys, each a uvarint length and the bytes
	spare [][]byte             // empty chunks for the arena, from tables grown out of
	bytes int                  // bytes in the arena
	dead  int                  // of which, bytes of removed keys
}

// idEntry is what the interner keeps per id: its key's ref (0 for a free
// id) and, for the worker, the latest time of a request of its key. They
// sit side by side so that a request's ref and latest time are one cache
// line, not two: with more keys than the cache holds, each line a request
// touches is a miss.
type idEntry struct {
	ref  keyRef
	last int64
}

// internSlot is one table entry: the high half of the key's hash and its
// id plus one (0 marks an empty slot). Eight fill a cache line.
type internSlot struct {
	tag uint32
	id1 uint32
}

// keyRef is a key, 0 for none. A key of up to inlineKey bytes is the ref
// itself: its bytes in the ref's eight bytes in little-endian order, and
// in the last, inlined plus its length. A longer key's ref locates it in
// the arena: chunk<<20 | offset, plus one, below 2^63. An offset is below
// keyChunk: a chunk is keyChunk bytes, or holds one longer key at offset
// 0.
type keyRef uint64

// inlineKey is the longest key a keyRef holds itself.
const inlineKey = 7

// inlined marks a keyRef that holds its key; the bits below it in the
// top byte are the key's length.
const inlined = 1 << 63

func refOf(chunk, off int) keyRef { return keyRef(uint64(chunk)<<refOffBits|uint64(off)) + 1 }

// inlineRef returns the keyRef that holds key, of at most inlineKey bytes.
func inlineRef(key []byte) keyRef {
	// Two loads that overlap, each byte landing at its own place in
	// both, instead of a loop over the bytes.
	n := len(key)
	var v uint64
	switch {
	case n >= 4:
		v = uint64(binary.LittleEndian.Uint32(key)) | uint64(binary.LittleEndian.Uint32(key[n-4:]))<<(8*(n-4))
	case n > 0:
		v = uint64(key[0]) | uint64(key[n/2])<<(8*(n/2)) | uint64(key[n-1])<<(8*(n-1))
	}
	return keyRef(v | inlined | uint64(n)<<56)
}

func (r keyRef) place() (chunk, off int) {
	return int((r - 1) >> refOffBits), int((r - 1) & (keyChunk - 1))
}

const refOffBits = 20 // log2 of keyChunk

// ref returns id's keyRef, 0 for a free id.
func (in *interner) ref(id uint32) keyRef {
	r, _ := in.getRef(id)
	return r
}

// setRef sets id's keyRef.
func (in *interner) setRef(id uint32, r keyRef) { in.perID.At(uint64(id)).ref = r }

// last returns where id's latest request time is kept, 0 until set.
func (in *interner) last(id uint32) *int64 { return &in.perID.At(uint64(id)).last }

// getRef is ref for an id that may be past every id given out (a stale
// hint): it reports false then, and grows nothing.
func (in *interner) getRef(id uint32) (keyRef, bool) {
	if e := in.perID.Get(uint64(id)); e != nil {
		return e.ref, true
	}
	return 0, false
}

const keyChunk = 1 << refOffBits // bytes per arena chunk

func newInterner() *interner {
	const size = 1 << 10
	return &interner{slots: make([]internSlot, size)}
}

// Len returns the number of keys held.
func (in *interner) Len() int { return in.n }

// key returns id's key bytes. A short key's are those of its ref, so they
// change when id's key does: a caller that keeps them past a removal or
// an insert copies them.
func (in *interner) key(id uint32) []byte {
	p := &in.perID.At(uint64(id)).ref
	r := *p
	if r&inlined == 0 {
		return in.at(r)
	}
	n := int(r>>56) & 7
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(p)), n)
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(r))
	return b[:n:n]
}

// littleEndian says a keyRef's bytes in memory are in little-endian
// order, so that a short key's bytes can be read in place.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// The table works on the high half of a key's hash, its tag: the tag
// picks the home slot and is kept in the slot, so growing needs no rehash.
// (The low half picks the worker.)
func tagOf(h uint64) uint32 { return uint32(h >> 32) }

func (in *interner) home(tag uint32) uint64 {
	// tag*len/2^32: the tags spread over the slots in order, whatever
	// the table's length.
	h, _ := bits.Mul64(uint64(tag)<<32, uint64(len(in.slots)))
	return h
}

// next is the slot after p, the first after the last.
func (in *interner) next(p uint64) uint64 {
	if p++; p == uint64(len(in.slots)) {
		return 0
	}
	return p
}

// dist is how many slots on from a b is, going round the table.
func (in *interner) dist(a, b uint64) uint64 {
	if b < a {
		return b + uint64(len(in.slots)) - a
	}
	return b - a
}

// prefetchHome starts loading the home slot of hash h into the cache.
func (in *interner) prefetchHome(h uint64) {
	prefetch.Range(unsafe.Pointer(&in.slots[in.home(tagOf(h))]), unsafe.Sizeof(internSlot{}))
}

// candidate returns the first slot at or after h's home whose tag matches
// h, or nil at an empty slot: nearly always the key's own slot.
func (in *interner) candidate(h uint64) *internSlot {
	tag := tagOf(h)
	for p := in.home(tag); ; p = in.next(p) {
		s := &in.slots[p]
		if s.id1 == 0 {
			return nil
		}
		if s.tag == tag {
			return s
		}
	}
}

// prefetchRef starts loading where the key of id is. It finds the ref's
// address without reading the ref, which would wait for the very miss
// the prefetch is to overlap.
func (in *interner) prefetchRef(id uint32) {
	if e := in.perID.Get(uint64(id)); e != nil {
		prefetch.Range(unsafe.Pointer(e), unsafe.Sizeof(*e))
	}
}

// prefetchKey starts loading the first bytes of id's key, if long (its
// ref prefetched a while before). The id may be out of date, its key
// removed or compacted away: it is only a hint, so it checks only that
// the memory is the arena's.
func (in *interner) prefetchKey(id uint32) {
	r, ok := in.getRef(id)
	if !ok || r == 0 || r&inlined != 0 {
		return
	}
	c, off := r.place()
	if c < len(in.arena) && off < len(in.arena[c]) {
		prefetch.Range(unsafe.Pointer(&in.arena[c][off]), 40)
	}
}

// owns reports whether s is a slot of the current table.
func (in *interner) owns(s *internSlot) bool {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(in.slots)))
	off := uintptr(unsafe.Pointer(s)) - base // wraps around below base
	return off < uintptr(len(in.slots))*unsafe.Sizeof(internSlot{})
}

// matches reports whether r, the ref of a slot's id, is key's, whose ref
// is short if key is short, else 0.
func (in *interner) matches(r keyRef, key []byte, short keyRef) bool {
	if short != 0 {
		return r == short
	}
	return r&inlined == 0 && bytes.Equal(in.at(r), key)
}

// find returns key's id, adding it when new (added reports that), and
// the id's entry, where the caller keeps the key's latest time. start is
// the candidate found earlier for this hash, or nil. It may be out of
// date: a slot since moved or emptied, or one of a table since grown out
// of; only a slot of the current table is trusted, and only once its key
// is checked.
func (in *interner) find(key []byte, h uint64, start *internSlot) (id uint32, e *idEntry, added bool) {
	tag := tagOf(h)
	var short keyRef
	if len(key) <= inlineKey {
		short = inlineRef(key)
	}
	if start != nil && in.owns(start) && start.id1 != 0 && start.tag == tag {
		if e := in.perID.Get(uint64(start.id1 - 1)); e != nil && in.matches(e.ref, key, short) {
			return start.id1 - 1, e, false
		}
	}
	p := in.home(tag)
	for {
		s := &in.slots[p]
		if s.id1 == 0 {
			id := in.insert(p, tag, key)
			return id, in.perID.At(uint64(id)), true
		}
		if s.tag == tag {
			if e := in.perID.Get(uint64(s.id1 - 1)); e != nil && in.matches(e.ref, key, short) {
				return s.id1 - 1, e, false
			}
		}
		p = in.next(p)
	}
}

// held reports whether id has a key.
func (in *interner) held(id uint32) bool { return in.ref(id) != 0 }

// ids returns one past the largest id ever given out.
func (in *interner) ids() int { return in.nids }

// remove deletes id's key; id is reused by a later insert.
func (in *interner) remove(id uint32) {
	key := in.key(id)
	p := in.home(tagOf(hashKey(key)))
	for in.slots[p].id1 != id+1 {
		p = in.next(p)
	}
	// Backward-shift deletion: move up every later entry of the probe run
	// whose home does not lie cyclically in (p, q].
	in.slots[p] = internSlot{}
	for q := in.next(p); in.slots[q].id1 != 0; q = in.next(q) {
		h := in.home(in.slots[q].tag)
		if in.dist(h, q) >= in.dist(p, q) {
			in.slots[p] = in.slots[q]
			in.slots[q] = internSlot{}
			p = q
		}
	}
	if len(key) > inlineKey {
		in.dead += recordLen(len(key))
	}
	in.setRef(id, 0)
	in.free = append(in.free, id)
	in.n--
	if in.dead > keyChunk && 2*in.dead > in.bytes {
		in.compact()
	}
}

// compact copies the held keys to a fresh arena.
func (in *interner) compact() {
	old := in.arena
	in.arena, in.bytes, in.dead = nil, 0, 0
	for id := range uint32(in.nids) {
		if r := in.ref(id); r != 0 && r&inlined == 0 {
			in.setRef(id, in.store(atIn(old, r)))
		}
	}
}

// at returns the key bytes at r, a long key's.
func (in *interner) at(r keyRef) []byte { return atIn(in.arena, r) }

// atIn returns the key bytes at r, a long key's, in arena.
func atIn(arena [][]byte, r keyRef) []byte {
	c, off := r.place()
	b := arena[c][off:]
	n, w := binary.Uvarint(b)
	return b[w : w+int(n) : w+int(n)]
}

// recordLen is the arena bytes a key of n bytes takes.
func recordLen(n int) int { return (bits.Len64(uint64(n)|1)+6)/7 + n }

// insert adds key at the empty slot p.
func (in *interner) insert(p uint64, tag uint32, key []byte) uint32 {
	ref := in.store(key)
	var id uint32
	if n := len(in.free); n > 0 {
		id = in.free[n-1]
		in.free = in.free[:n-1]
	} else {
		id = uint32(in.nids)
		in.nids++
	}
	in.setRef(id, ref)
	s := &in.slots[p]
	s.tag, s.id1 = tag, id+1
	in.n++
	if 4*in.n > 3*len(in.slots) {
		in.grow()
	}
	return id
}

// store returns the keyRef of key: a short key's holds it; a longer one
// is copied, after its length, into the arena. A key never straddles two
// chunks; one longer than a chunk gets a chunk of its own.
func (in *interner) store(key []byte) keyRef {
	if len(key) <= inlineKey {
		return inlineRef(key)
	}
	need := recordLen(len(key))
	last := len(in.arena) - 1
	if last < 0 || len(in.arena[last])+need > cap(in.arena[last]) {
		var c []byte
		if n := len(in.spare); n > 0 && need <= keyChunk {
			c, in.spare = in.spare[n-1], in.spare[:n-1]
		} else {
			c = make([]byte, 0, max(keyChunk, need))
		}
		in.arena = append(in.arena, c)
		last++
	}
	c := in.arena[last]
	off := len(c)
	c = binary.AppendUvarint(c, uint64(len(key)))
	in.arena[last] = append(c, key...)
	in.bytes += need
	return refOf(last, off)
}

// grow makes the table half as long again: it is then between half and
// three quarters full, where doubling would leave it between three
// eighths and three quarters, about a sixth more bytes a key on average.
func (in *interner) grow() {
	old := in.slots
	in.slots = chunk.Written[internSlot](len(old) + len(old)/2) // probed before written
	for _, s := range old {
		if s.id1 == 0 {
			continue
		}
		p := in.home(s.tag)
		for in.slots[p].id1 != 0 {
			p = in.next(p)
		}
		in.slots[p] = s
	}
	in.recycle(old)
}

// recycle keeps the memory of old, a table grown out of, as spare chunks
// of the arena. Otherwise it would lie unused in the heap until the next
// collection, which with millions of keys comes a heap's worth of
// allocation later: the table was the largest thing freed, and a growing
// arena needs about as many bytes again. Tables of less than a chunk are
// left to the collector. Nothing reads old as slots after this: a slot
// pointer kept as a hint (see find) is checked to be the current
// table's before it is read.
func (in *interner) recycle(old []internSlot) {
	n := len(old) * int(unsafe.Sizeof(internSlot{}))
	if n < keyChunk {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(old))), n)
	for ; len(b) >= keyChunk; b = b[keyChunk:] {
		in.spare = append(in.spare, b[:0:keyChunk])
	}
}

// hashKey hashes a key for sharding (low bits) and interning (high bits).
func hashKey(b []byte) uint64 { return keyhash.Sum(b) }
