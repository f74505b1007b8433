package sim

import (
	"bytes"
	"unsafe"

	"github.com/ratesim/ratesim/internal/chunk"
	"github.com/ratesim/ratesim/internal/keyhash"
	"github.com/ratesim/ratesim/internal/prefetch"
)

// interner maps keys to dense ids 0, 1, 2, ... for one worker.
//
// It is an open-addressing hash table over the 64-bit hashes the reader
// already computed, with the key bytes in a chunked arena and, for short
// keys, in the slot too, so that checking a short key costs no more cache
// misses than finding its slot. The caller prefetches slots and key bytes
// well before it looks a key up (see worker.step), so that the misses of a
// batch overlap instead of following one another as in a Go map.
//
// Keys can be removed: their ids are reused, and the arena is compacted
// when most of it holds removed keys.
type interner struct {
	slots []internSlot // power-of-two length, at most half full
	mask  uint64
	n     int      // keys held
	refs  []keyRef // per id: where its bytes are; freeRef for a free id
	free  []uint32 // ids to reuse
	arena [][]byte // chunks of key bytes
	bytes int      // key bytes in the arena
	dead  int      // of which, bytes of removed keys
}

// freeRef marks an id with no key.
var freeRef = keyRef{chunk: ^uint32(0)}

// internSlot is one table entry: the high half of the key's hash, its id
// plus one (0 marks an empty slot), where its bytes are, and the bytes
// themselves when they fit. Two slots fill a cache line.
type internSlot struct {
	tag   uint32
	id1   uint32
	ref   keyRef
	short [shortKey]byte // the key, when ref.len <= shortKey
}

// shortKey is the longest key a slot holds: room enough for user ids like
// "u123" or "user-1234567", while two slots still fill a cache line.
const shortKey = 12

// keyRef locates a key's bytes: arena[chunk][off:off+len].
type keyRef struct {
	chunk, off, len uint32
}

const keyChunk = 1 << 20 // bytes per arena chunk

func newInterner() *interner {
	const size = 1 << 10
	return &interner{slots: make([]internSlot, size), mask: size - 1}
}

// Len returns the number of keys held.
func (in *interner) Len() int { return in.n }

// key returns id's key bytes.
func (in *interner) key(id uint32) []byte { return in.at(in.refs[id]) }

// The table works on the high half of a key's hash, its tag: the tag
// picks the home slot and is kept in the slot, so growing needs no rehash.
// (The low half picks the worker.)
func tagOf(h uint64) uint32 { return uint32(h >> 32) }

func (in *interner) home(tag uint32) uint64 { return uint64(tag) & in.mask }

// prefetchHome starts loading the home slot of hash h into the cache.
func (in *interner) prefetchHome(h uint64) {
	prefetch.Range(unsafe.Pointer(&in.slots[in.home(tagOf(h))]), unsafe.Sizeof(internSlot{}))
}

// candidate returns the first slot at or after h's home whose tag matches
// h, or nil at an empty slot: nearly always the key's own slot.
func (in *interner) candidate(h uint64) *internSlot {
	tag := tagOf(h)
	for p := in.home(tag); ; p = (p + 1) & in.mask {
		s := &in.slots[p]
		if s.id1 == 0 {
			return nil
		}
		if s.tag == tag {
			return s
		}
	}
}

// prefetchKey starts loading the key bytes of slot s into the cache,
// unless the slot holds them.
func (in *interner) prefetchKey(s *internSlot) {
	if r := s.ref; r.len > shortKey {
		prefetch.Range(unsafe.Pointer(&in.arena[r.chunk][r.off]), uintptr(r.len))
	}
}

// owns reports whether s is a slot of the current table.
func (in *interner) owns(s *internSlot) bool {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(in.slots)))
	off := uintptr(unsafe.Pointer(s)) - base // wraps around below base
	return off < uintptr(len(in.slots))*unsafe.Sizeof(internSlot{})
}

// holds reports whether slot s holds key.
func (in *interner) holds(s *internSlot, key []byte) bool {
	if len(key) != int(s.ref.len) {
		return false
	}
	if len(key) <= shortKey {
		return string(s.short[:len(key)]) == string(key)
	}
	return bytes.Equal(in.at(s.ref), key)
}

// lookup returns key's id, adding it when new (added reports that). start
// is the candidate found earlier for this hash, or nil. It may be out of
// date: a slot since moved or emptied, or one of a table since grown out
// of, whose key bytes may since have been compacted away; only a slot of
// the current table is trusted, and only once its key is checked.
func (in *interner) lookup(key []byte, h uint64, start *internSlot) (id uint32, added bool) {
	tag := tagOf(h)
	if start != nil && in.owns(start) && start.id1 != 0 && in.holds(start, key) {
		return start.id1 - 1, false
	}
	p := in.home(tag)
	for {
		s := &in.slots[p]
		if s.id1 == 0 {
			return in.insert(p, tag, key), true
		}
		if s.tag == tag && in.holds(s, key) {
			return s.id1 - 1, false
		}
		p = (p + 1) & in.mask
	}
}

// held reports whether id has a key.
func (in *interner) held(id uint32) bool { return in.refs[id] != freeRef }

// ids returns one past the largest id ever given out.
func (in *interner) ids() int { return len(in.refs) }

// remove deletes id's key; id is reused by a later insert.
func (in *interner) remove(id uint32) {
	key := in.key(id)
	p := in.home(tagOf(hashKey(key)))
	for in.slots[p].id1 != id+1 {
		p = (p + 1) & in.mask
	}
	// Backward-shift deletion: move up every later entry of the probe run
	// whose home does not lie cyclically in (p, q].
	in.slots[p] = internSlot{}
	for q := (p + 1) & in.mask; in.slots[q].id1 != 0; q = (q + 1) & in.mask {
		h := in.home(in.slots[q].tag)
		if (q-h)&in.mask >= (q-p)&in.mask {
			in.slots[p] = in.slots[q]
			in.slots[q] = internSlot{}
			p = q
		}
	}
	in.dead += len(key)
	in.refs[id] = freeRef
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
	for i := range in.slots {
		s := &in.slots[i]
		if s.id1 == 0 {
			continue
		}
		r := s.ref
		s.ref = in.store(old[r.chunk][r.off : r.off+r.len])
		in.refs[s.id1-1] = s.ref
	}
}

func (in *interner) at(r keyRef) []byte {
	return in.arena[r.chunk][r.off : r.off+r.len]
}

// insert adds key at the empty slot p.
func (in *interner) insert(p uint64, tag uint32, key []byte) uint32 {
	ref := in.store(key)
	var id uint32
	if n := len(in.free); n > 0 {
		id = in.free[n-1]
		in.free = in.free[:n-1]
		in.refs[id] = ref
	} else {
		id = uint32(len(in.refs))
		in.refs = append(in.refs, ref)
	}
	s := &in.slots[p]
	s.tag, s.id1, s.ref = tag, id+1, ref
	s.short = [shortKey]byte{}
	if len(key) <= shortKey {
		copy(s.short[:], key)
	}
	in.n++
	if 2*in.n > len(in.slots) {
		in.grow()
	}
	return id
}

// store copies key into the arena. A key never straddles two chunks; one
// longer than a chunk gets a chunk of its own.
func (in *interner) store(key []byte) keyRef {
	last := len(in.arena) - 1
	if last < 0 || len(in.arena[last])+len(key) > cap(in.arena[last]) {
		in.arena = append(in.arena, make([]byte, 0, max(keyChunk, len(key))))
		last++
	}
	c := in.arena[last]
	off := len(c)
	in.arena[last] = append(c, key...)
	in.bytes += len(key)
	return keyRef{chunk: uint32(last), off: uint32(off), len: uint32(len(key))}
}

// grow doubles the table.
func (in *interner) grow() {
	old := in.slots
	in.slots = chunk.Written[internSlot](2 * len(old)) // probed before written
	in.mask = uint64(len(in.slots) - 1)
	for _, s := range old {
		if s.id1 == 0 {
			continue
		}
		p := in.home(s.tag)
		for in.slots[p].id1 != 0 {
			p = (p + 1) & in.mask
		}
		in.slots[p] = s
	}
}

// hashKey hashes a key for sharding (low bits) and interning (high bits).
func hashKey(b []byte) uint64 { return keyhash.Sum(b) }
