package sim

import (
	"cmp"
	"math/bits"
	"slices"
	"time"
	"unsafe"

	"github.com/ratesim/ratesim/internal/chunk"
	"github.com/ratesim/ratesim/internal/prefetch"
	"github.com/ratesim/ratesim/limiters"
)

// DurationCount is how many rejections were told to wait Wait.
type DurationCount struct {
	Wait  time.Duration
	Count int64
}

// rejections gathers, for one worker and Config.Rejections, which keys
// each lane rejected at least once and the RetryAfter of every request
// each lane rejected, exactly.
type rejections struct {
	words int
	// slab holds, per key met, words mask words of the lanes that
	// rejected it; a key's entry outlives its id, so that a key forgotten
	// as idle and met again is not counted twice.
	slab   []uint64
	byID   chunk.Array[uint32] // per key id, its slab entry + 1; 0: not looked up
	byHash map[uint64]uint32   // per key hash, its slab entry
	keys   []int64             // per lane, the keys it rejected
	waits  []waitCounts        // per lane, the RetryAfter of its rejections
}

// newRejections gathers the rejections of lanes lanes in words mask
// words; with tailFrom positive, the lanes' waits keep only their tail
// once tailFrom are counted (see Config.WaitsTail).
func newRejections(lanes, words int, tailFrom int64) *rejections {
	rj := &rejections{words: words, byHash: map[uint64]uint32{}, keys: make([]int64, lanes), waits: make([]waitCounts, lanes)}
	for l := range rj.waits {
		rj.waits[l].next = tailFrom
	}
	return rj
}

// entry returns the mask words of the lanes that rejected key id (hash h).
func (rj *rejections) entry(id uint32, h uint64) []uint64 {
	p := rj.byID.At(uint64(id))
	if *p == 0 {
		e, ok := rj.byHash[h]
		if !ok {
			e = uint32(len(rj.slab) / rj.words)
			rj.slab = append(rj.slab, make([]uint64, rj.words)...)
			rj.byHash[h] = e
		}
		*p = e + 1
	}
	off := int(*p-1) * rj.words
	return rj.slab[off : off+rj.words]
}

// prefetchID starts loading where id's link to its entry is.
func (rj *rejections) prefetchID(id uint32) {
	if p := rj.byID.Get(uint64(id)); p != nil {
		prefetch.Range(unsafe.Pointer(p), 4)
	}
}

// prefetchEntry starts loading id's entry, if it has one: it reads id's
// link, which prefetchID started loading a while before.
func (rj *rejections) prefetchEntry(id uint32) {
	if p := rj.byID.Get(uint64(id)); p != nil && *p != 0 {
		if off := int(*p-1) * rj.words; off < len(rj.slab) {
			prefetch.Range(unsafe.Pointer(&rj.slab[off]), uintptr(rj.words)*8)
		}
	}
}

// forget drops id's link to its entry, as id is about to stand for
// another key.
func (rj *rejections) forget(id uint32) {
	if p := rj.byID.Get(uint64(id)); p != nil {
		*p = 0
	}
}

// note counts the rejections of one request of key id (hash h) by the
// lanes in mask, bit j of mask word word being lane base+j, each told to
// wait waits[l] (lane l = base+j).
func (rj *rejections) note(id uint32, h uint64, word, base int, mask uint64, waits []time.Duration) {
	rj.mark(id, h, word, base, mask)
	for m := mask; m != 0; m &= m - 1 {
		l := base + bits.TrailingZeros64(m)
		rj.waits[l].add(waits[l])
	}
}

// noteSpans is note with the waits as limiters.Group.AdmitWaits wrote
// them: lane base+j's in spans[j].
func (rj *rejections) noteSpans(id uint32, h uint64, word, base int, mask uint64, spans []limiters.Span) {
	rj.mark(id, h, word, base, mask)
	for m := mask; m != 0; m &= m - 1 {
		j := bits.TrailingZeros64(m)
		rj.waits[base+j].add(spans[j].Duration())
	}
}

// mark counts key id (hash h) as rejected by the lanes in mask, bit j of
// mask word word being lane base+j, that had not rejected it before.
func (rj *rejections) mark(id uint32, h uint64, word, base int, mask uint64) {
	e := rj.entry(id, h)
	for fresh := mask &^ e[word]; fresh != 0; fresh &= fresh - 1 {
		rj.keys[base+bits.TrailingZeros64(fresh)]++
	}
	e[word] |= mask
}

// waitCounts counts durations by value: an open-addressing table, as a
// lane's rejections are told few different waits, and the same one many
// times in a row. A slot holds the value beside its count, so that a
// probe is one cache miss, not two.
//
// With next positive it keeps only a tail: values below floor are
// counted in below alone, and each time the values counted reach next
// (which then doubles) floor rises to the largest value that leaves at
// least a sixteenth of them at or above it, and the table drops what is
// below it. Every value below counts is then shorter than every value
// the table holds.
type waitCounts struct {
	slots []waitSlot
	n     int
	last  int // the slot of the latest value, a fast path for runs

	floor time.Duration
	below int64 // values below floor
	kept  int64 // values in the table
	next  int64 // values counted at which to raise floor; 0: never
}

// waitSlot is one value and how many times it was counted; a count of 0
// marks a free slot.
type waitSlot struct {
	v time.Duration
	c int64
}

// add counts v. Most of a long replay's values fall below the floor:
// that case is small enough to be inlined.
func (wc *waitCounts) add(v time.Duration) {
	if v < wc.floor {
		wc.below++
		return
	}
	wc.addKept(v)
}

// addKept is add for v at or above the floor.
func (wc *waitCounts) addKept(v time.Duration) {
	if wc.next > 0 && wc.kept+wc.below >= wc.next {
		wc.raise()
		if v < wc.floor {
			wc.below++
			return
		}
	}
	wc.kept++
	if wc.n > 0 {
		if s := &wc.slots[wc.last]; s.c != 0 && s.v == v {
			s.c++
			return
		}
	}
	if 2*(wc.n+1) > len(wc.slots) {
		wc.grow()
	}
	mask := len(wc.slots) - 1
	for i := waitHome(v, mask); ; i = (i + 1) & mask {
		s := &wc.slots[i]
		switch {
		case s.c == 0:
			s.v, s.c = v, 1
			wc.n++
			wc.last = i
			return
		case s.v == v:
			s.c++
			wc.last = i
			return
		}
	}
}

func waitHome(v time.Duration, mask int) int { return int(uint64(v)*0x9e3779b97f4a7c15>>32) & mask }

func (wc *waitCounts) grow() {
	old := wc.slots
	size := max(64, 2*len(old))
	wc.slots, wc.n = make([]waitSlot, size), 0
	mask := size - 1
	for _, s := range old {
		if s.c == 0 {
			continue
		}
		i := waitHome(s.v, mask)
		for wc.slots[i].c != 0 {
			i = (i + 1) & mask
		}
		wc.slots[i] = s
		wc.n++
	}
	wc.last = 0
}

// raise raises floor as far as it goes keeping a sixteenth of the values
// counted at or above it, drops from the table the values below it, and
// doubles next.
func (wc *waitCounts) raise() {
	total := wc.kept + wc.below
	wc.next = 2 * total
	vals := make([]waitSlot, 0, wc.n)
	for _, s := range wc.slots {
		if s.c != 0 {
			vals = append(vals, s)
		}
	}
	slices.SortFunc(vals, func(a, b waitSlot) int { return cmp.Compare(b.v, a.v) }) // longest first
	need, seen := (total+15)/16, int64(0)
	i := 0
	for ; i < len(vals); i++ {
		if seen += vals[i].c; seen >= need {
			break
		}
	}
	if i == len(vals) || vals[i].v <= wc.floor {
		return // the table holds too few to cut it
	}
	wc.floor = vals[i].v
	kept := vals[:i+1]
	for _, s := range vals[i+1:] {
		wc.below += s.c
		wc.kept -= s.c
	}
	wc.slots, wc.n, wc.last = nil, 0, 0
	size := 64
	for 2*len(kept) > size {
		size *= 2
	}
	wc.slots = make([]waitSlot, size)
	mask := size - 1
	for _, s := range kept {
		j := waitHome(s.v, mask)
		for wc.slots[j].c != 0 {
			j = (j + 1) & mask
		}
		wc.slots[j] = s
		wc.n++
	}
}

// mergeTail merges the waits of the workers' wc into a lane's sorted list
// into, of which below more, shorter than floor, are left out: it returns
// the list of the values at or above the highest floor and how many are
// below it.
func mergeTail(into []DurationCount, below int64, floor time.Duration, wc *waitCounts) ([]DurationCount, int64, time.Duration) {
	into = mergeWaits(into, wc)
	below += wc.below
	floor = max(floor, wc.floor)
	cut := 0
	for cut < len(into) && into[cut].Wait < floor {
		below += into[cut].Count
		cut++
	}
	return into[cut:], below, floor
}

// mergeWaits adds the counts of wc to the sorted list into, returning the
// sorted result.
func mergeWaits(into []DurationCount, wc *waitCounts) []DurationCount {
	for _, s := range wc.slots {
		if s.c != 0 {
			into = append(into, DurationCount{Wait: s.v, Count: s.c})
		}
	}
	slices.SortFunc(into, func(a, b DurationCount) int { return cmp.Compare(a.Wait, b.Wait) })
	out := into[:0]
	for _, d := range into {
		if len(out) > 0 && out[len(out)-1].Wait == d.Wait {
			out[len(out)-1].Count += d.Count
			continue
		}
		out = append(out, d)
	}
	return out
}

// tailQuantile is Quantile of the waits of tail and below more, each
// shorter than every wait of tail, not listed; known is false when the
// quantile is among those not listed.
func tailQuantile(tail []DurationCount, below, num, den int64) (w time.Duration, ok, known bool) {
	if below == 0 {
		w, ok = Quantile(tail, num, den)
		return w, ok, true
	}
	total := below
	for _, d := range tail {
		total += d.Count
	}
	if den <= 0 || num < 0 || num > den {
		return 0, false, true
	}
	rank := rankOf(total, num, den)
	seen := uint64(below)
	if seen >= rank {
		return 0, false, false
	}
	for _, d := range tail {
		seen += uint64(d.Count)
		if seen >= rank {
			return d.Wait, true, true
		}
	}
	return tail[len(tail)-1].Wait, true, true
}

// rankOf is the nearest rank of the fraction num/den (0 <= num <= den,
// den > 0) of total counts: ceil(total*num/den), at least 1.
func rankOf(total, num, den int64) uint64 {
	// In 128 bits; as num <= den the quotient fits, so hi < den.
	hi, lo := bits.Mul64(uint64(total), uint64(num))
	rank, r := bits.Div64(hi, lo, uint64(den))
	if r != 0 {
		rank++
	}
	return max(rank, 1)
}

// Quantile returns the smallest wait w such that at least the fraction
// num/den (between 0 and 1) of the counted rejections waited w or less:
// the nearest-rank quantile, exact. ok is false when nothing was counted
// or the fraction is not between 0 and 1.
func Quantile(waits []DurationCount, num, den int64) (w time.Duration, ok bool) {
	var total int64
	for _, d := range waits {
		total += d.Count
	}
	if total == 0 || den <= 0 || num < 0 || num > den {
		return 0, false
	}
	rank := rankOf(total, num, den)
	var seen uint64
	for _, d := range waits {
		seen += uint64(d.Count)
		if seen >= rank {
			return d.Wait, true
		}
	}
	return waits[len(waits)-1].Wait, true
}
