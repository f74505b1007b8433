package sim

import (
	"math/bits"
	"unsafe"

	"github.com/ratesim/ratesim/internal/prefetch"
)

// burstTracker finds, for every algorithm and the keys of one worker, the
// largest allowed cost inside any closed interval of a fixed length.
//
// Each key has one ring of the requests that any algorithm allowed within
// the last interval, each entry marked with the algorithms that allowed it,
// and the total cost of the ring. The interval is the same for every
// algorithm, so one ring serves them all. An algorithm's own sum is at most
// the total, so it is only counted out of the ring when the total could
// beat that algorithm's best so far, which after the first moments of a
// trace is rare. A ring starts inside the key's slot and moves to a chunked
// arena of plain values when it outgrows it, so the garbage collector has
// nothing to scan and no huge slice is ever copied to grow.
type burstTracker struct {
	interval int64
	slots    chunked[burstSlot]
	arena    [][]burstEntry // chunks of ring storage
	cur      int            // the shared chunk new small rings go to; -1: none
	used     int            // entries used in chunk cur
	spare    [32][]region   // regions given up, by log2 of their size

	best []algoBest // per algorithm

	perKey bool
	keyBst chunked[[maxAlgos]keyBest] // with perKey: each key's best intervals
}

// maxAlgos bounds the algorithms of one run: each has a bit in an entry's
// mask. There are seven, and a run names each at most once.
const maxAlgos = 7

// maxCost bounds the cost an entry can hold beside its mask. Run refuses
// policies whose limit or capacity could admit more in one request.
const maxCost = 1<<56 - 1

// burstEntry is one allowed request: its time, and its cost with, in the low
// byte, the algorithms that allowed it.
type burstEntry struct {
	time int64
	cm   uint64
}

func (e burstEntry) cost() int64 { return int64(e.cm >> 8) }
func (e burstEntry) mask() uint8 { return uint8(e.cm) }

// burstSlot is one key's ring and its total cost, in three aligned cache
// lines. With cap 0 the ring is the slot's inline entries; otherwise it is
// arena[chunk][off:off+cap]. Entry i (0 the oldest) is at (head+i)%cap.
type burstSlot struct {
	chunk, off, cap, head, n uint32
	total                    int64
	inline                   [inlineRing]burstEntry
	_                        [32]byte
}

// inlineRing is how many entries a ring holds in its slot. Rings that
// outgrow the slot cost a cache miss a request, as the prefetch does not
// reach them; with the seed's policies a key seldom allows more than eight
// requests in a window under all algorithms together.
const inlineRing = 8

// region is a ring's place in the arena.
type region struct{ chunk, off uint32 }

// algoBest is an algorithm's worst interval so far.
type algoBest struct {
	Interval
	seq int64 // request that closed it; -1: none yet
	id  uint32
}

type keyBest struct {
	count, from, to, seq int64
}

// scoredInterval is a key's best interval with what orders it.
type scoredInterval struct {
	Interval
	seq  int64
	algo int
}

const arenaChunk = 1 << 16 // entries per arena chunk (1 MiB)

func newBurstTracker(interval int64, nalg int, perKey bool) *burstTracker {
	bt := &burstTracker{interval: interval, cur: -1, perKey: perKey, best: make([]algoBest, nalg)}
	for a := range bt.best {
		bt.best[a].seq = -1
	}
	return bt
}

// ring returns s's entries' storage; its length is a power of two.
func (bt *burstTracker) ring(s *burstSlot) []burstEntry {
	if s.cap == 0 {
		return s.inline[:]
	}
	return bt.arena[s.chunk][s.off : s.off+s.cap]
}

// prefetch starts loading the first two cache lines of id's slot: its
// header and, since an inline ring starts at the first entry, the first
// six entries, which hold most rings. It does not follow the slot to a
// ring in the arena, which would mean waiting for the slot.
func (bt *burstTracker) prefetch(id uint32) {
	if s := bt.slots.peek(id); s != nil {
		prefetch.Range(unsafe.Pointer(s), 128)
	}
}

// record notes that the algorithms in mask allowed the seq-th request of
// the trace, by key id at time t with cost c. inOrder says that no earlier
// request of any key came later than t, which saves looking at the ring's
// newest entry (often a cache miss for a ring in the arena).
func (bt *burstTracker) record(id uint32, t, c, seq int64, mask uint8, inOrder bool) {
	s := bt.slots.at(id)
	r := bt.ring(s)
	wrap := uint32(len(r) - 1)
	if s.n > 0 {
		// Under the clamp clock policy a request may be earlier than the
		// last one; the limiters treated it as the last.
		if !inOrder {
			if last := r[(s.head+s.n-1)&wrap].time; t < last {
				t = last
			}
		}
		// Drop entries older than t - interval (closed interval: an entry
		// exactly at t - interval stays). Unsigned difference: t >= front.
		for s.n > 0 {
			f := r[s.head]
			if uint64(t)-uint64(f.time) <= uint64(bt.interval) {
				break
			}
			s.total -= f.cost()
			s.head = (s.head + 1) & wrap
			s.n--
		}
	}
	if s.cap == 0 && s.head != 0 {
		// An inline ring is kept from the slot's first entry on, so that
		// a short one stays in the slot's first two cache lines: the only
		// ones prefetched.
		copy(s.inline[:s.n], s.inline[s.head:s.head+s.n])
		s.head = 0
	}
	if int(s.n) == len(r) {
		r = bt.grow(s, r)
		wrap = uint32(len(r) - 1)
	}
	r[(s.head+s.n)&wrap] = burstEntry{time: t, cm: uint64(c)<<8 | uint64(mask)}
	s.n++
	s.total += c
	if !bt.perKey && !bt.mayBeat(mask, s.total) {
		return
	}
	var sums [maxAlgos]int64
	var from [maxAlgos]int64
	var seen uint8
	for i := uint32(0); i < s.n; i++ {
		e := r[(s.head+i)&wrap]
		m := e.mask() & mask
		for first := m &^ seen; first != 0; first &= first - 1 {
			from[bits.TrailingZeros8(first)] = e.time
		}
		seen |= m
		for ; m != 0; m &= m - 1 {
			sums[bits.TrailingZeros8(m)] += e.cost()
		}
	}
	for m := mask; m != 0; m &= m - 1 {
		a := bits.TrailingZeros8(m)
		if b := &bt.best[a]; sums[a] > b.Count {
			b.Interval = Interval{Count: sums[a], From: from[a], To: t} // Key: filled in by the worker
			b.seq = seq
			b.id = id
		}
		if bt.perKey {
			k := &bt.keyBst.at(id)[a]
			if sums[a] > k.count {
				*k = keyBest{count: sums[a], from: from[a], to: t, seq: seq}
			}
		}
	}
}

// mayBeat reports whether a ring of this total could hold more for some
// algorithm in mask than that algorithm's best so far.
func (bt *burstTracker) mayBeat(mask uint8, total int64) bool {
	for m := mask; m != 0; m &= m - 1 {
		if total > bt.best[bits.TrailingZeros8(m)].Count {
			return true
		}
	}
	return false
}

// grow moves s's ring r to a region twice its size in the arena, entries
// in order from 0, and returns the new ring. The old region, if in the
// arena, is kept for another ring of its size.
func (bt *burstTracker) grow(s *burstSlot, r []burstEntry) []burstEntry {
	ncap := uint32(2 * len(r))
	chunk, off := bt.region(ncap)
	dst := bt.arena[chunk][off : off+ncap]
	wrap := uint32(len(r) - 1)
	for i := uint32(0); i < s.n; i++ {
		dst[i] = r[(s.head+i)&wrap]
	}
	bt.release(s)
	s.chunk, s.off, s.cap, s.head = chunk, off, ncap, 0
	return dst
}

// region returns room for a ring of size, a power of two: one given up
// before, else new room in the arena.
func (bt *burstTracker) region(size uint32) (chunk, off uint32) {
	class := bits.TrailingZeros32(size)
	if n := len(bt.spare[class]); n > 0 {
		g := bt.spare[class][n-1]
		bt.spare[class] = bt.spare[class][:n-1]
		return g.chunk, g.off
	}
	if size > arenaChunk/4 {
		// A large ring gets a chunk of its own.
		bt.arena = append(bt.arena, make([]burstEntry, size))
		return uint32(len(bt.arena) - 1), 0
	}
	if bt.cur < 0 || bt.used+int(size) > arenaChunk {
		bt.arena = append(bt.arena, make([]burstEntry, arenaChunk))
		bt.cur = len(bt.arena) - 1
		bt.used = 0
	}
	off = uint32(bt.used)
	bt.used += int(size)
	return uint32(bt.cur), off
}

// release gives up s's arena region, if it has one.
func (bt *burstTracker) release(s *burstSlot) {
	if s.cap != 0 {
		class := bits.TrailingZeros32(s.cap)
		bt.spare[class] = append(bt.spare[class], region{s.chunk, s.off})
	}
}

// keyBest returns id's best interval under algorithm a, if it has one.
func (bt *burstTracker) keyBest(keys *interner, id uint32, a int) (scoredInterval, bool) {
	k := bt.keyBst.peek(id)
	if k == nil || k[a].count == 0 {
		return scoredInterval{}, false
	}
	return scoredInterval{
		Interval: Interval{Key: string(keys.key(id)), From: k[a].from, To: k[a].to, Count: k[a].count},
		seq:      k[a].seq,
		algo:     a,
	}, true
}

// keyBests lists every held key's best interval under algorithm a, for
// the report's top list.
func (bt *burstTracker) keyBests(keys *interner, a int) []scoredInterval {
	var out []scoredInterval
	for id := range uint32(keys.ids()) {
		if !keys.held(id) {
			continue
		}
		if k, ok := bt.keyBest(keys, id, a); ok {
			out = append(out, k)
		}
	}
	return out
}

// idle reports whether id's ring can hold nothing of an interval that
// ends at or after now: every entry is older than now - interval.
func (bt *burstTracker) idle(id uint32, now int64) bool {
	s := bt.slots.peek(id)
	if s == nil || s.n == 0 {
		return true
	}
	r := bt.ring(s)
	newest := r[(s.head+s.n-1)&uint32(len(r)-1)].time
	return now > newest && uint64(now)-uint64(newest) > uint64(bt.interval)
}

// reset empties id's ring and forgets its best intervals.
func (bt *burstTracker) reset(id uint32) {
	if s := bt.slots.peek(id); s != nil {
		bt.release(s)
		*s = burstSlot{}
	}
	if k := bt.keyBst.peek(id); k != nil {
		*k = [maxAlgos]keyBest{}
	}
}

// chunked is a slice indexed by key id, grown a chunk at a time so that
// growing never copies what is already there.
type chunked[T any] struct {
	chunks [][]T
}

const chunkBits = 12

// at returns the element for id, growing to include it.
func (c *chunked[T]) at(id uint32) *T {
	ci := int(id >> chunkBits)
	for ci >= len(c.chunks) {
		c.chunks = append(c.chunks, makeWritten[T](1<<chunkBits))
	}
	return &c.chunks[ci][id&(1<<chunkBits-1)]
}

// makeWritten returns make([]T, n) with a zero value written into every
// 4 KiB of it, for memory that is read before it is written. Reading a
// page fresh from the operating system maps the shared zero page, and the
// write after it then takes a second, copy-on-write fault whose TLB flush
// interrupts every other CPU the process runs on; writing first takes one
// plain fault a page.
func makeWritten[T any](n int) []T {
	s := make([]T, n)
	var zero T
	for i, step := 0, max(1, 4096/int(unsafe.Sizeof(zero))); i < n; i += step {
		s[i] = zero
	}
	return s
}

// peek returns the element for id, or nil when it was never grown to.
func (c *chunked[T]) peek(id uint32) *T {
	ci := int(id >> chunkBits)
	if ci >= len(c.chunks) {
		return nil
	}
	return &c.chunks[ci][id&(1<<chunkBits-1)]
}
