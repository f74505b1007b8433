package sim

import (
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/ratesim/ratesim/internal/chunk"
	"github.com/ratesim/ratesim/internal/prefetch"
)

// burstTracker finds, for every lane (algorithm) and the keys of one
// worker, the largest allowed cost inside any closed interval of a fixed
// length.
//
// Each key has one ring per lane: the requests that lane allowed, at the
// times the lane took them, oldest first. Lanes that decide alike and take
// requests at the same times (a token bucket, a leaky bucket and GCRA
// under one policy) share one ring. A lane's burst is computed from
// its own requests only, so what other lanes allow, or how far back in
// time they accept requests, never changes it. The ring holds the
// requests of the interval that ends at its newest entry, whose cost it
// keeps as a running total, and before them those that a request still to
// come may reach back to: a fixed window or sliding counter admits a
// request earlier than its newest one as long as it falls in the current
// window. A request in time order (the common case) then needs no scan:
// the interval it closes holds the running total. Only a request that
// lands before the newest entry is placed by a scan of the intervals that
// contain it.
//
// A ring starts inside its lane slot and moves to a chunked arena of plain
// values when it outgrows it, so the garbage collector has nothing to scan
// and no huge slice is ever copied to grow.
type burstTracker struct {
	interval int64
	nrings   int   // rings per key
	ringOf   []int // per lane, its ring
	// align is, per ring, the window of lanes that admit requests earlier
	// than their newest one within the same window, else 0.
	align []int64
	slots []chunk.Array[laneRing] // per ring, by key id
	arena [][]burstEntry          // chunks of ring storage
	cur   int                     // the shared chunk new small rings go to; -1: none
	used  int                     // entries used in chunk cur
	spare [32][]region            // regions given up, by log2 of their size

	best []algoBest // per ring
	// bound is, per ring, the most cost its lanes can ever allow in one
	// interval (math.MaxInt64 when no bound is known, or it does not fit,
	// so a figure that reaches it may still overflow), and open the set
	// of rings whose best is still below it. Without per-key bests, a ring
	// whose best has reached its bound can never beat it, ties keep the
	// earlier interval, so it need not be kept at all: after the first
	// moments of a bursty trace most rings stop costing anything.
	bound []int64
	open  []bool

	perKey bool
	keyBst []chunk.Array[keyBest] // with perKey: per ring, by key id
	// With perKey, lead holds the top worst intervals offered so far,
	// of different rings and keys (keys told apart by their hash), worst
	// first, and floor is the count of the last once there are top of
	// them, else 0. No interval of at most floor can make the top list:
	// it ranks after those, which closed earlier. So a ring whose bound
	// is at most floor, and whose best has reached it, need not be kept
	// even though every key's best is wanted; the bests it leaves as they
	// were are at most its bound, and one that reached it is final.
	// Telling keys apart by hash may take two keys for one, which only
	// keeps floor lower, never wrong.
	lead  []leader
	top   int
	floor int64

	// banks are, per mask word, the bank that keeps some of its lanes'
	// rings, or nil; ringBank and ringBit say, per ring, which bank and
	// bit keep it (ringBank -1: its own rings).
	banks    []*bank
	ringBank []int
	ringBit  []int

	// lists are, by key id, the keys' rings in brief (see burstList);
	// listBit is per ring its bit in the lists' masks (-1: no list serves
	// it) and listRing per bit its ring.
	lists    chunk.Array[burstList]
	listBit  []int
	listRing []int
	// slotRings are the open rings no list serves, whose slots prefetch
	// loads, and spillRings the open rings the lists serve, whose slots
	// prefetchSpilled loads: kept as rings close, so that a prefetch
	// walks only what it loads.
	slotRings, spillRings []int
	// openLanes is, by mask word, the set of lanes whose ring is open:
	// once most rings have closed, a request then walks only the lanes
	// whose bursts are still kept.
	openLanes []uint64
	// listed counts the requests the lists took (for tests), started the
	// lists begun (a key's begins again once every entry has left it)
	// and spills the keys that spilled; offAfter is
	// listsOffAfter, but in tests; listsOff says the lists were dropped
	// (see dropLists), spilling dropSpills keys still in them (for tests).
	listed, started, spills, offAfter, dropSpills int64
	listsOff                                      bool
}

// burstEntry is one allowed request: its time and its cost.
type burstEntry struct {
	time, cost int64
}

// laneRing is one key's ring under one lane, in two aligned cache lines.
// With cap 0 the ring is the inline entries; otherwise it is
// arena[chunk][off:off+cap]. Entry i (0 the oldest) is at (head+i)%cap.
// The oldest out entries lie before the interval that ends at the newest
// one; total is the cost of the others.
type laneRing struct {
	total                         int64
	n, head, out, cap, chunk, off uint32
	inline                        [inlineRing]burstEntry
}

// inlineRing is how many entries a ring holds in its slot. Rings that
// outgrow the slot cost a cache miss a request, as the prefetch does not
// reach them.
const inlineRing = 6

// region is a ring's place in the arena.
type region struct{ chunk, off uint32 }

// algoBest is a ring's worst interval so far.
type algoBest struct {
	Interval
	seq   int64 // request that closed it; -1: none yet
	id    uint32
	named bool // Key holds id's name
}

// leader is one of the worst intervals so far: its ring, its key's hash
// and its count.
type leader struct {
	ring  int
	hash  uint64
	count int64
}

// keyBest is one key's worst interval so far in one ring.
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

// newBurstTracker returns a tracker of rings that, per key, lane l keeps
// in ring ringOf[l]; align and bound are per ring. With top > 0 it keeps
// every key's best intervals, for a list of the top worst.
func newBurstTracker(interval int64, align, bound []int64, ringOf []int, top int) *burstTracker {
	bt := &burstTracker{interval: interval, nrings: len(align), ringOf: ringOf, align: align, bound: bound, cur: -1, perKey: top > 0, top: top, best: make([]algoBest, len(align)), open: make([]bool, len(align))}
	// Ring by ring, not key by key: a ring that stops being kept (see
	// tracks) then stops taking memory too.
	bt.slots = make([]chunk.Array[laneRing], len(align))
	bt.keyBst = make([]chunk.Array[keyBest], len(align))
	bt.ringBank, bt.ringBit = make([]int, len(align)), make([]int, len(align))
	for a := range bt.best {
		bt.best[a].seq = -1
		bt.open[a] = true
		bt.ringBank[a] = -1
	}
	bt.openLanes = make([]uint64, (len(ringOf)+wordLanes-1)/wordLanes)
	bt.openRings()
	return bt
}

// openRings sets slotRings, spillRings and openLanes from the rings open
// and the lists' bits.
func (bt *burstTracker) openRings() {
	clear(bt.openLanes)
	for a, l := range bt.ringOf {
		if bt.open[l] {
			bt.openLanes[a/wordLanes] |= 1 << (a % wordLanes)
		}
	}
	bt.slotRings, bt.spillRings = bt.slotRings[:0], bt.spillRings[:0]
	for l := range bt.nrings {
		switch {
		case !bt.open[l], bt.ringBank[l] >= 0: // closed, or a bank's
		case l < len(bt.listBit) && bt.listBit[l] >= 0:
			bt.spillRings = append(bt.spillRings, l)
		default:
			bt.slotRings = append(bt.slotRings, l)
		}
	}
}

// addBank has the bank of mask word word keep the rings of the lanes in
// lanes, bit b being lane base+b, each the owner of its ring.
func (bt *burstTracker) addBank(word, base int, lanes uint64) {
	for len(bt.banks) <= word {
		bt.banks = append(bt.banks, nil)
	}
	bt.banks[word] = newBank(base, lanes)
	for m := lanes; m != 0; m &= m - 1 {
		b := bits.TrailingZeros64(m)
		r := bt.ringOf[base+b]
		bt.ringBank[r], bt.ringBit[r] = word, b
	}
}

// bankOf returns the bank of mask word word, or nil.
func (bt *burstTracker) bankOf(word int) *bank {
	if word < len(bt.banks) {
		return bt.banks[word]
	}
	return nil
}

// tracks reports whether ring l still needs its requests: its best can
// still be beaten, or a key's best of it can still make the top list.
func (bt *burstTracker) tracks(l int) bool {
	return bt.open[l]
}

// bestOf returns lane l's worst interval so far.
func (bt *burstTracker) bestOf(l int) *algoBest { return &bt.best[bt.ringOf[l]] }

// ring returns s's entries' storage, and the mask that wraps an index
// into it. An arena ring's length is a power of two; an inline ring never
// wraps, as it is kept from its first entry on (see record), so its mask
// need only cover it.
func (bt *burstTracker) ring(s *laneRing) ([]burstEntry, uint32) {
	if s.cap == 0 {
		return s.inline[:], 1<<bits.Len32(inlineRing) - 1
	}
	return bt.arena[s.chunk][s.off : s.off+s.cap], s.cap - 1
}

// prefetch starts loading id's ring slots, but for the rings its list
// serves (see prefetchSpilled). It does not follow a slot to a ring in
// the arena, which would mean waiting for the slot.
func (bt *burstTracker) prefetch(id uint32) {
	if len(bt.listRing) > 0 {
		bt.prefetchList(id)
	}
	for _, bk := range bt.banks {
		if bk != nil && bk.lanes != 0 {
			bk.prefetch(id)
		}
	}
	for _, l := range bt.slotRings {
		bt.prefetchSlot(l, id)
	}
	if !bt.perKey {
		return
	}
	for l := range bt.nrings {
		if !bt.tracks(l) {
			continue
		}
		if k := bt.keyBst[l].Get(uint64(id)); k != nil {
			prefetch.Range(unsafe.Pointer(k), unsafe.Sizeof(*k))
		}
	}
}

// prefetchSlot starts loading id's slot of ring l.
func (bt *burstTracker) prefetchSlot(l int, id uint32) {
	if s := bt.slots[l].Get(uint64(id)); s != nil {
		prefetch.Range(unsafe.Pointer(s), unsafe.Sizeof(*s))
	}
}

// prefetchSpilled starts loading id's slots of the rings its list serves,
// if the key has spilled or its list is full, so that the request is
// likely to spill it: otherwise the list is all a request reads of them,
// and loading lines it will not read would hold up those it will. It
// reads the list, which prefetch started loading a while before.
func (bt *burstTracker) prefetchSpilled(id uint32) {
	if len(bt.spillRings) == 0 {
		return
	}
	if k := bt.lists.Get(uint64(id)); k == nil || !k.spilled() && !k.full() {
		return
	}
	for _, l := range bt.spillRings {
		bt.prefetchSlot(l, id)
	}
}

// before reports whether entry time e lies more than the interval before
// t: outside the closed interval [t-interval, t]. Unsigned difference, so
// that no subtraction overflows.
func (bt *burstTracker) before(e, t int64) bool {
	return e < t && uint64(t)-uint64(e) > uint64(bt.interval)
}

// keepFrom returns the earliest time a request still to come can be
// taken at by the lanes of ring l, given its newest entry at t: the start of t's
// window for a lane that accepts requests back to it, else t.
func (bt *burstTracker) keepFrom(l int, t int64) int64 {
	w := bt.align[l]
	if w == 0 {
		return t
	}
	q := t / w
	if t%w < 0 {
		q--
	}
	return q * w // no overflow: the start of a window that contains t
}

// record notes that the lanes of ring l allowed the seq-th request of the
// trace, of key id (hash h) with cost c, taking it at time t. It reports false when the cost
// of one interval no longer fits an int64; the run must then stop, as the
// tracker's figures are no longer sure.
func (bt *burstTracker) record(id uint32, h uint64, l int, t, c, seq int64) bool {
	if bt.listBit[l] >= 0 {
		if k := bt.lists.At(uint64(id)); !k.spilled() {
			bt.spill(id, k) // the ring, not the list, takes the key's requests from now on
		}
	}
	s := bt.slots[l].At(uint64(id))
	r, wrap := bt.ring(s)
	if s.n > 0 {
		if newest := r[(s.head+s.n-1)&wrap].time; t < newest {
			return bt.insert(id, h, l, s, t, c, seq)
		}
		// Forget entries no request to come can reach: those more than
		// the interval before the earliest time such a request can have.
		keep := bt.keepFrom(l, t)
		for s.n > 0 && bt.before(r[s.head].time, keep) {
			if s.out > 0 {
				s.out--
			} else {
				s.total -= r[s.head].cost
			}
			s.head = (s.head + 1) & wrap
			s.n--
		}
		// Entries older than t - interval leave the running total.
		for s.out < s.n {
			e := r[(s.head+s.out)&wrap]
			if !bt.before(e.time, t) {
				break
			}
			s.total -= e.cost
			s.out++
		}
	}
	if s.total > math.MaxInt64-c {
		return false
	}
	if s.cap == 0 && s.head != 0 {
		// An inline ring is kept from the slot's first entry on, so that
		// a short one stays in the lines the prefetch loads.
		copy(s.inline[:s.n], s.inline[s.head:s.head+s.n])
		s.head = 0
	}
	if int(s.n) == len(r) {
		r, wrap = bt.grow(s, r, wrap)
	}
	r[(s.head+s.n)&wrap] = burstEntry{time: t, cost: c}
	s.n++
	s.total += c
	from := r[(s.head+s.out)&wrap].time
	bt.offer(id, h, l, s.total, from, t, seq)
	return true
}

// offer notes an interval of key id (hash h) in ring l: count from from
// to to, closed by request seq.
func (bt *burstTracker) offer(id uint32, h uint64, l int, count, from, to, seq int64) {
	if b := &bt.best[l]; count > b.Count {
		b.Interval = Interval{Count: count, From: from, To: to} // Key: named by the worker
		b.seq, b.id, b.named = seq, id, false
		bt.closeIfDone(l)
	}
	if bt.perKey {
		if k := bt.keyBst[l].At(uint64(id)); count > k.count {
			*k = keyBest{count: count, from: from, to: to, seq: seq}
		}
		if count > bt.floor {
			bt.lift(l, h, count)
		}
	}
}

// lift raises the lead to an interval of ring l and the key of hash h
// holding count, more than floor.
func (bt *burstTracker) lift(l int, h uint64, count int64) {
	i := slices.IndexFunc(bt.lead, func(e leader) bool { return e.ring == l && e.hash == h })
	switch {
	case i >= 0:
		bt.lead[i].count = max(bt.lead[i].count, count)
	case len(bt.lead) < bt.top:
		bt.lead = append(bt.lead, leader{l, h, count})
		i = len(bt.lead) - 1
	default:
		i = len(bt.lead) - 1
		bt.lead[i] = leader{l, h, count}
	}
	for ; i > 0 && bt.lead[i-1].count < bt.lead[i].count; i-- {
		bt.lead[i-1], bt.lead[i] = bt.lead[i], bt.lead[i-1]
	}
	if len(bt.lead) == bt.top && bt.lead[bt.top-1].count > bt.floor {
		bt.floor = bt.lead[bt.top-1].count
		for r := range bt.nrings {
			bt.closeIfDone(r)
		}
	}
}

// closeIfDone stops keeping ring l once no interval of it can matter any
// more: its best has reached its bound, beyond which none can go (ties
// keep the earlier interval), and, with per-key bests, so has floor.
func (bt *burstTracker) closeIfDone(l int) {
	b := bt.bound[l]
	if !bt.open[l] || b == math.MaxInt64 || bt.best[l].Count < b || (bt.perKey && bt.floor < b) {
		return
	}
	// Its rings are no longer read, and give their memory back.
	bt.open[l] = false
	bt.openRings()
	bt.slots[l].Drop(bt.release)
	if w := bt.ringBank[l]; w >= 0 {
		bt.banks[w].close(1 << bt.ringBit[l])
	}
}

// insert places an entry at t, earlier than the newest of s, after the
// entries at or before t, and offers the worst interval that contains it:
// of those that start at an entry no more than the interval before t, the
// one holding the most cost, the earliest of equals.
func (bt *burstTracker) insert(id uint32, h uint64, l int, s *laneRing, t, c, seq int64) bool {
	r, wrap := bt.ring(s)
	newest := r[(s.head+s.n-1)&wrap].time
	inside := !bt.before(t, newest)
	if inside && s.total > math.MaxInt64-c {
		return false
	}
	if int(s.n) == len(r) {
		r, wrap = bt.grow(s, r, wrap)
	}
	at := s.n
	for at > 0 && r[(s.head+at-1)&wrap].time > t {
		r[(s.head+at)&wrap] = r[(s.head+at-1)&wrap]
		at--
	}
	r[(s.head+at)&wrap] = burstEntry{time: t, cost: c}
	s.n++
	if inside {
		s.total += c
	} else {
		s.out++
	}
	// Two pointers over the entries: i the first of an interval, j one
	// past its last, sum the cost between.
	var best, from, to, sum int64
	j := uint32(0)
	for i := uint32(0); i < s.n; i++ {
		ei := r[(s.head+i)&wrap]
		if ei.time > t {
			break
		}
		if j < i {
			j, sum = i, 0
		}
		for j < s.n {
			ej := r[(s.head+j)&wrap]
			if bt.before(ei.time, ej.time) {
				break
			}
			if sum > math.MaxInt64-ej.cost {
				return false
			}
			sum += ej.cost
			j++
		}
		if !bt.before(ei.time, t) && sum > best {
			best, from, to = sum, ei.time, r[(s.head+j-1)&wrap].time
		}
		sum -= ei.cost
	}
	bt.offer(id, h, l, best, from, to, seq)
	return true
}

// grow moves s's full ring r, whose indexes wrap with wrap, to a region
// of the next power of two in the arena, entries in order from 0, and
// returns the new ring and its mask. The old region, if in the arena, is
// kept for another ring of its size.
func (bt *burstTracker) grow(s *laneRing, r []burstEntry, wrap uint32) ([]burstEntry, uint32) {
	ncap := uint32(1) << bits.Len32(uint32(len(r)))
	chunk, off := bt.region(ncap)
	dst := bt.arena[chunk][off : off+ncap]
	for i := uint32(0); i < s.n; i++ {
		dst[i] = r[(s.head+i)&wrap]
	}
	bt.release(s)
	s.chunk, s.off, s.cap, s.head = chunk, off, ncap, 0
	return dst, ncap - 1
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
func (bt *burstTracker) release(s *laneRing) {
	if s.cap != 0 {
		class := bits.TrailingZeros32(s.cap)
		bt.spare[class] = append(bt.spare[class], region{s.chunk, s.off})
	}
}

// keyBest returns id's best interval under lane l, if it has one.
func (bt *burstTracker) keyBest(keys *interner, id uint32, l int) (scoredInterval, bool) {
	k := bt.keyBst[bt.ringOf[l]].Get(uint64(id))
	if k == nil || k.count == 0 {
		return scoredInterval{}, false
	}
	return scoredInterval{
		Interval: Interval{Key: string(keys.key(id)), From: k.from, To: k.to, Count: k.count},
		seq:      k.seq,
		algo:     l,
	}, true
}

// topKeyBests lists the n worst of the held keys' best intervals over
// every lane of lanes, worst first (as sortIntervals orders them), naming
// only those: the candidates the live keys give the report's top list.
func (bt *burstTracker) topKeyBests(keys *interner, lanes, n int) []scoredInterval {
	type candidate struct {
		count, seq int64
		algo       int
		id         uint32
	}
	// worse reports whether a ranks after b.
	worse := func(a, b candidate) bool {
		if a.count != b.count {
			return a.count < b.count
		}
		if a.seq != b.seq {
			return a.seq > b.seq
		}
		return a.algo > b.algo
	}
	// Worst first; as long as the held keys' bests, not n.
	top := make([]candidate, 0, min(n, keys.Len()*lanes)+1)
	for l := range lanes {
		bests := &bt.keyBst[bt.ringOf[l]]
		for id := range uint32(keys.ids()) {
			k := bests.Get(uint64(id))
			if k == nil || k.count == 0 || !keys.held(id) {
				continue
			}
			c := candidate{k.count, k.seq, l, id}
			if len(top) == n && !worse(top[n-1], c) {
				continue
			}
			i := len(top)
			for i > 0 && worse(top[i-1], c) {
				i--
			}
			top = slices.Insert(top, i, c)
			top = top[:min(len(top), n)]
		}
	}
	out := make([]scoredInterval, len(top))
	for i, c := range top {
		out[i], _ = bt.keyBest(keys, c.id, c.algo)
	}
	return out
}

// idle reports whether id's rings hold nothing that a request taken at or
// after now can reach: in each ring, the newest entry is more than the
// interval before the earliest time its lanes can take such a request at.
func (bt *burstTracker) idle(id uint32, now int64) bool {
	if !bt.idleList(id, now) {
		return false
	}
	for _, bk := range bt.banks {
		if bk != nil && bk.lanes != 0 && !bt.idleBank(bk, id, now) {
			return false
		}
	}
	for l := range bt.nrings {
		s := bt.slots[l].Get(uint64(id))
		if s == nil || s.n == 0 || !bt.tracks(l) {
			continue
		}
		r, wrap := bt.ring(s)
		newest := r[(s.head+s.n-1)&wrap].time
		if !bt.before(newest, bt.keepFrom(l, now)) {
			return false
		}
	}
	return true
}

// reset empties id's rings and forgets its best intervals.
func (bt *burstTracker) reset(id uint32) {
	if k := bt.lists.Get(uint64(id)); k != nil {
		*k = burstList{}
	}
	for _, bk := range bt.banks {
		if bk != nil {
			bk.reset(id)
		}
	}
	for l := range bt.nrings {
		if s := bt.slots[l].Get(uint64(id)); s != nil {
			bt.release(s)
			*s = laneRing{}
		}
		if k := bt.keyBst[l].Get(uint64(id)); k != nil {
			*k = keyBest{}
		}
	}
}
