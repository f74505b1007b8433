package sim

import (
	"math"
	"math/bits"
	"reflect"
	"unsafe"

	"github.com/ratesim/ratesim/internal/chunk"
	"github.com/ratesim/ratesim/internal/prefetch"
)

// bank tracks the bursts of the rings of one mask word whose lanes take
// every request at its own time and never one earlier than their newest
// (no aligned span, no queue, the reject clock), when no key's own best
// is wanted. Instead of one ring per key and lane, a key has one list of
// the requests any of them allowed, in time order, each with the set of
// lanes that did, and per lane the cost of its entries inside the interval
// that ends at its newest and where in the list that interval starts.
// With many lanes, a request then touches one list and one row of totals
// rather than a ring per lane, and a key's memory is a list and twelve
// bytes per lane rather than a ring per lane.
//
// Bit b of a bank's masks is lane base+b; the bank keeps the ring of
// that lane (tracker.ringOf), which owns it.
type bank struct {
	base  int
	lanes uint64 // the lanes the bank keeps
	keys  chunk.Array[bankKey]
	// rows holds per key width int64 totals, then width uint32 starts:
	// per lane, the cost of its entries in the interval that ends at its
	// newest, and the index in the list of the first entry that may be in
	// it.
	rows  chunk.Blocks
	width int
}

// bankKey is one key's list, in time order, and the length at which it
// is next compacted.
type bankKey struct {
	entries []bankEntry
	compact int
}

// bankEntry is one request some of the bank's lanes allowed.
type bankEntry struct {
	time, cost int64
	lanes      uint64
}

// banked is the fewest lanes of one mask word that make a bank: with
// fewer, a ring per lane is as fast and takes less memory.
const banked = 8

func newBank(base int, lanes uint64) *bank {
	bk := &bank{base: base, lanes: lanes, width: bits.Len64(lanes)}
	bk.rows = bk.newRows()
	return bk
}

func (bk *bank) newRows() chunk.Blocks {
	return chunk.NewBlocks(reflect.ArrayOf(bk.width+(bk.width+1)/2, reflect.TypeFor[int64]()))
}

// row returns id's totals and starts.
func (bk *bank) row(id uint32) (tot []int64, start []uint32) {
	p := bk.rows.At(id)
	tot = unsafe.Slice((*int64)(p), bk.width)
	start = unsafe.Slice((*uint32)(unsafe.Add(p, 8*bk.width)), bk.width)
	return tot, start
}

// close stops keeping the lanes of mask; once it keeps none, its memory
// goes.
func (bk *bank) close(mask uint64) {
	bk.lanes &^= mask
	if bk.lanes == 0 {
		bk.keys = chunk.Array[bankKey]{}
		bk.rows = bk.newRows()
	}
}

// recordBank notes that the lanes in mask (bits of bank bk) allowed the
// seq-th request of the trace, of key id with cost c, at time t, none of
// them earlier than its newest. It reports false when the cost of one
// interval no longer fits an int64.
func (bt *burstTracker) recordBank(bk *bank, id uint32, mask uint64, t, c, seq int64) bool {
	k := bk.keys.At(uint64(id))
	tot, start := bk.row(id)
	// The entry's place: the end, unless lanes that allowed a later
	// request than this one (of a trace out of time order) made the
	// list's newest later than t.
	at := len(k.entries)
	for at > 0 && k.entries[at-1].time > t {
		at--
	}
	k.entries = append(k.entries, bankEntry{})
	if at < len(k.entries)-1 {
		copy(k.entries[at+1:], k.entries[at:])
		for b := range start {
			if int(start[b]) > at {
				start[b]++
			}
		}
	}
	k.entries[at] = bankEntry{time: t, cost: c, lanes: mask}
	for m := mask; m != 0; m &= m - 1 {
		b := bits.TrailingZeros64(m)
		bit := uint64(1) << b
		// The lane's entries more than the interval before t leave its
		// total.
		i := int(start[b])
		for ; i < at && bt.before(k.entries[i].time, t); i++ {
			if e := &k.entries[i]; e.lanes&bit != 0 {
				tot[b] -= e.cost
			}
		}
		if tot[b] == 0 {
			i = at // none of its entries before this one counts
		}
		start[b] = uint32(i)
		if tot[b] > math.MaxInt64-c {
			return false
		}
		tot[b] += c
		l := bt.ringOf[bk.base+b]
		if tot[b] > bt.best[l].Count {
			from := t
			for ; i < at; i++ {
				if k.entries[i].lanes&bit != 0 {
					from = k.entries[i].time
					break
				}
			}
			bt.offer(id, 0, l, tot[b], from, t, seq) // banks keep no per-key bests: they serve runs without Top
		}
	}
	if len(k.entries) >= max(k.compact, 16) {
		bk.compact(k, tot, start)
	}
	return true
}

// compact drops the entries that no lane's interval can reach any more:
// those before every lane's start (a lane with nothing in its interval
// needs none).
func (bk *bank) compact(k *bankKey, tot []int64, start []uint32) {
	drop := len(k.entries)
	for b, s := range start {
		if tot[b] > 0 {
			drop = min(drop, int(s))
		}
	}
	n := copy(k.entries, k.entries[drop:])
	clear(k.entries[n:])
	k.entries = k.entries[:n]
	for b := range start {
		start[b] = uint32(max(int(start[b])-drop, 0))
	}
	k.compact = 2 * n
}

// idleBank reports whether id's list holds nothing a request at or after
// now can reach.
func (bt *burstTracker) idleBank(bk *bank, id uint32, now int64) bool {
	k := bk.keys.Get(uint64(id))
	return k == nil || len(k.entries) == 0 || bt.before(k.entries[len(k.entries)-1].time, now)
}

// reset empties id's list and totals.
func (bk *bank) reset(id uint32) {
	if k := bk.keys.Get(uint64(id)); k != nil {
		*k = bankKey{}
	}
	if bk.rows.Get(id) != nil {
		tot, start := bk.row(id)
		clear(tot)
		clear(start)
	}
}

// prefetch starts loading id's list header and totals.
func (bk *bank) prefetch(id uint32) {
	if k := bk.keys.Get(uint64(id)); k != nil {
		prefetch.Range(unsafe.Pointer(k), unsafe.Sizeof(*k))
	}
	if p := bk.rows.Get(id); p != nil {
		prefetch.Range(p, uintptr(bk.width)*8)
	}
}
