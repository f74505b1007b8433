package sim

import (
	"math/bits"
	"unsafe"

	"github.com/ratesim/ratesim/internal/prefetch"
)

// burstList keeps a key's rings in brief while they are short: instead of
// a ring per lane (two cache lines each), one list of the requests any of
// the list's rings allowed, in time order, each with the set of rings that
// did and its cost. Where many keys are live at once and each has sent a
// request or two, as in a day of an API's traffic, it is most of what
// burst tracking costs: 32 bytes a key for every ring instead of 128 a
// ring.
//
// A list serves the rings that take requests at the request's own time
// (not a queue's, which takes them at their release) and that no bank
// keeps, up to listRings of them. Its intervals are those the rings would
// hold, entry for entry: a ring's entries are the list's entries of its
// bit, dropped when the ring would forget them (see record). When a
// request does not fit the list (a list full, a request earlier than its
// newest entry, a cost above 255, or a time the lane takes it at other
// than its own), the key spills: its list becomes the rings it stands for,
// which take that request and every later one of the key until it is
// forgotten.
type burstList struct {
	t [listLen]int64
	// meta holds per entry i, in bits 16i to 16i+15, its cost (the low
	// byte; 0 past the last entry) and its rings (the high byte), and in
	// bit 63 whether the key has spilled.
	meta uint64
}

const (
	listLen    = 3 // entries a list holds
	listRings  = 8 // rings a list serves: a byte of mask per entry
	listCost   = 255
	spilledBit = 1 << 63
)

func (k *burstList) spilled() bool { return k.meta&spilledBit != 0 }

// full reports whether the list holds listLen entries: a request that
// forgets none of them spills the key.
func (k *burstList) full() bool { return k.cost(listLen-1) != 0 }

// len returns the number of entries.
func (k *burstList) len() int {
	n := 0
	for n < listLen && k.cost(n) != 0 {
		n++
	}
	return n
}

func (k *burstList) cost(i int) int64   { return int64(k.meta >> (16 * i) & 0xff) }
func (k *burstList) rings(i int) uint64 { return k.meta >> (16*i + 8) & 0xff }
func (k *burstList) set(i int, t, c int64, m uint64) {
	k.t[i] = t
	k.meta = k.meta&^(0xffff<<(16*i)) | (uint64(c)|m<<8)<<(16*i)
}

// Lists pay for themselves in memory only where keys stay in them. A ring
// array grows in chunks up to the highest id that spilled, so once keys
// have spilled all over the ids, the rings' memory is taken whether or not
// the other keys are in lists, and a list is one more cache line read and
// written on every request. So once listsOffAfter keys have spilled, as
// many as one in 64 of the lists begun (spread at random over the ids, a
// chunk of 1024 ids then holds one that spilled all but surely), the
// tracker spills every key still listed and keeps rings only from then on
// (see dropLists). The choice is the same on every run of a trace, and
// what is reported is the same either way.
const listsOffAfter = 1024

// listBits gives the list bits of the rings that qualify: those of which
// delays says no lane delays, that no bank keeps, the first listRings of
// them; none when none is set (for tests). It is called once the banks
// are set. offAfter, when positive, replaces listsOffAfter (for tests).
func (bt *burstTracker) listBits(delays []bool, none bool, offAfter int64) {
	bt.offAfter = listsOffAfter
	if offAfter > 0 {
		bt.offAfter = offAfter
	}
	bt.listBit = make([]int, bt.nrings)
	for l := range bt.nrings {
		bt.listBit[l] = -1
		if !none && !delays[l] && bt.ringBank[l] < 0 && len(bt.listRing) < listRings {
			bt.listBit[l] = len(bt.listRing)
			bt.listRing = append(bt.listRing, l)
		}
	}
	bt.openRings()
}

// listOf returns the list bit of ring l, or -1 when no list serves it.
func (bt *burstTracker) listOf(l int) int { return bt.listBit[l] }

// openList returns the list bits of the rings still tracked.
func (bt *burstTracker) openList() uint64 {
	var m uint64
	for b, l := range bt.listRing {
		if bt.tracks(l) {
			m |= 1 << b
		}
	}
	return m
}

// recordList notes that the list rings of the bits in m allowed the
// seq-th request of the trace, of key id (hash h) with cost c, each
// taking it at its own time t. It returns -1, or the first ring for which
// record reported false.
func (bt *burstTracker) recordList(id uint32, h uint64, m uint64, t, c, seq int64) int {
	k := bt.lists.At(uint64(id))
	if !k.spilled() {
		if bt.noteList(id, h, k, m, t, c, seq) {
			return -1
		}
		bt.spill(id, k)
	}
	rings := bt.listRing
	if bt.spills >= bt.offAfter && bt.spills*64 >= bt.started {
		bt.dropLists()
	}
	for ; m != 0; m &= m - 1 {
		if l := rings[bits.TrailingZeros64(m)]; !bt.record(id, h, l, t, c, seq) {
			return l
		}
	}
	return -1
}

// dropLists spills every key still in a list and serves every ring from
// its rings alone from then on (see listsOffAfter).
func (bt *burstTracker) dropLists() {
	id := uint32(0)
	bt.lists.Drop(func(k *burstList) {
		if !k.spilled() && k.len() > 0 {
			bt.spill(id, k)
			bt.dropSpills++
		}
		id++
	})
	for l := range bt.listBit {
		bt.listBit[l] = -1
	}
	bt.listRing = nil
	bt.listsOff = true
	bt.openRings()
}

// noteList is recordList on the key's list k, unless the request does not
// fit it: then it reports false, having changed nothing the rings would
// not have, so that the key can spill and its rings take the request.
func (bt *burstTracker) noteList(id uint32, h uint64, k *burstList, m uint64, t, c, seq int64) bool {
	n := k.len()
	if n == 0 {
		bt.started++
	}
	if c > listCost || n > 0 && t < k.t[n-1] {
		return false
	}
	// What each ring of m forgets as it takes a request at t (see
	// record), and what closed rings no longer need, leaves the list.
	open := bt.openList()
	keep := 0
	for i := range n {
		et, ec, em := k.t[i], k.cost(i), k.rings(i)&open
		for r := em & m; r != 0; r &= r - 1 {
			b := bits.TrailingZeros64(r)
			if bt.before(et, bt.keepFrom(bt.listRing[b], t)) {
				em &^= 1 << b
			}
		}
		if em != 0 {
			k.set(keep, et, ec, em)
			keep++
		}
	}
	for i := keep; i < n; i++ {
		k.set(i, 0, 0, 0)
	}
	if keep == listLen {
		return false
	}
	k.set(keep, t, c, m)
	bt.listed++
	// Each ring's interval ending at t: its entries not more than the
	// interval before t, this one included.
	for r := m; r != 0; r &= r - 1 {
		b := bits.TrailingZeros64(r)
		total, from := int64(0), t
		for i := keep; i >= 0; i-- {
			if k.rings(i)&(1<<b) == 0 {
				continue
			}
			if bt.before(k.t[i], t) {
				break
			}
			total += k.cost(i)
			from = k.t[i]
		}
		bt.offer(id, h, bt.listRing[b], total, from, t, seq)
	}
	return true
}

// spill turns id's list k into the rings it stands for: for each ring, its
// entries in order, the running total of those inside the interval that
// ends at its newest, the older ones out of it. The list is then only a
// mark that the rings hold the key.
func (bt *burstTracker) spill(id uint32, k *burstList) {
	n := k.len()
	for b, l := range bt.listRing {
		if !bt.tracks(l) {
			continue
		}
		var s *laneRing
		for i := range n {
			if k.rings(i)&(1<<b) == 0 {
				continue
			}
			if s == nil {
				s = bt.slots[l].At(uint64(id)) // a fresh ring: the key has none yet
			}
			s.inline[s.n] = burstEntry{time: k.t[i], cost: k.cost(i)}
			s.n++
		}
		if s == nil {
			continue
		}
		newest := s.inline[s.n-1].time
		for _, e := range s.inline[:s.n] {
			if bt.before(e.time, newest) {
				s.out++
			} else {
				s.total += e.cost
			}
		}
	}
	*k = burstList{meta: spilledBit}
	bt.spills++
}

// idleList reports whether id's list holds nothing that a request taken
// at or after now can reach; a spilled key's rings say for themselves.
func (bt *burstTracker) idleList(id uint32, now int64) bool {
	k := bt.lists.Get(uint64(id))
	if k == nil || k.spilled() {
		return true
	}
	open := bt.openList()
	for i := range k.len() {
		for r := k.rings(i) & open; r != 0; r &= r - 1 {
			if !bt.before(k.t[i], bt.keepFrom(bt.listRing[bits.TrailingZeros64(r)], now)) {
				return false
			}
		}
	}
	return true
}

// prefetchList starts loading id's list.
func (bt *burstTracker) prefetchList(id uint32) {
	if k := bt.lists.Get(uint64(id)); k != nil {
		prefetch.Range(unsafe.Pointer(k), unsafe.Sizeof(*k))
	}
}
