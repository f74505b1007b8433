package sim

import (
	"cmp"
	"math/bits"
	"slices"
	"time"

	"github.com/ratesim/ratesim/internal/chunk"
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

func newRejections(lanes, words int) *rejections {
	return &rejections{words: words, byHash: map[uint64]uint32{}, keys: make([]int64, lanes), waits: make([]waitCounts, lanes)}
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
	e := rj.entry(id, h)
	for fresh := mask &^ e[word]; fresh != 0; fresh &= fresh - 1 {
		rj.keys[base+bits.TrailingZeros64(fresh)]++
	}
	e[word] |= mask
	for m := mask; m != 0; m &= m - 1 {
		l := base + bits.TrailingZeros64(m)
		rj.waits[l].add(waits[l])
	}
}

// waitCounts counts durations by value: an open-addressing table, as a
// lane's rejections are told few different waits, and the same one many
// times in a row. A slot holds the value beside its count, so that a
// probe is one cache miss, not two.
type waitCounts struct {
	slots []waitSlot
	n     int
	last  int // the slot of the latest value, a fast path for runs
}

// waitSlot is one value and how many times it was counted; a count of 0
// marks a free slot.
type waitSlot struct {
	v time.Duration
	c int64
}

func (wc *waitCounts) add(v time.Duration) {
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
	// rank = ceil(total*num/den), at least 1, in 128 bits; as num <= den
	// the quotient fits, so hi < den.
	hi, lo := bits.Mul64(uint64(total), uint64(num))
	rank, r := bits.Div64(hi, lo, uint64(den))
	if r != 0 {
		rank++
	}
	rank = max(rank, 1)
	var seen uint64
	for _, d := range waits {
		seen += uint64(d.Count)
		if seen >= rank {
			return d.Wait, true
		}
	}
	return waits[len(waits)-1].Wait, true
}
