package sim

import (
	"bytes"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/ratesim/ratesim/internal/chunk"
	"github.com/ratesim/ratesim/internal/prefetch"
)

// KeyRejections are one key's counts under one lane, for
// Config.MostRejected.
type KeyRejections struct {
	Key          string
	Requests     int64 // the key's, under every lane
	Rejected     int64
	FalseRejects int64 // rejected while the oracle allowed
	// FirstRejection is the time of the key's first rejection, as the
	// trace wrote it.
	FirstRejection string
}

// keyCounts counts, for one worker and Config.MostRejected, every key's
// requests and per lane its rejections, false rejections and first
// rejection, exactly. The counts sit by key id, beside the key's other
// state; a key forgotten as idle takes its counts along into retired, and
// gets them back should it come again.
type keyCounts struct {
	lanes int
	// hot are, per key id, stride int64s: the requests, then per lane
	// the rejections and the false rejections. first are, per key id and
	// lane, where the time text of the first rejection is in text.
	hot     [][]int64 // chunks of chunk.Size ids
	stride  int
	first   [][]textSpan // chunks of chunk.Size ids
	retired map[string]*retiredCounts
	text    []byte // first rejections' times, back to back
}

// retiredCounts are the counts of a key forgotten as idle.
type retiredCounts struct {
	hot   []int64
	first []textSpan
}

// textSpan locates bytes in keyCounts.text.
type textSpan struct{ off, len int }

func newKeyCounts(lanes int) *keyCounts {
	return &keyCounts{lanes: lanes, stride: 1 + 2*lanes, retired: map[string]*retiredCounts{}}
}

// entry returns the counts of key id: the requests, then per lane the
// rejections and the false rejections.
func (kc *keyCounts) entry(id uint32) []int64 {
	c := int(id >> chunk.Bits)
	for c >= len(kc.hot) {
		kc.hot = append(kc.hot, chunk.Written[int64](chunk.Size*kc.stride))
		kc.first = append(kc.first, make([]textSpan, chunk.Size*kc.lanes))
	}
	off := int(id&(chunk.Size-1)) * kc.stride
	return kc.hot[c][off : off+kc.stride : off+kc.stride]
}

// firsts returns where the first rejections of key id are, per lane.
func (kc *keyCounts) firsts(id uint32) []textSpan {
	off := int(id&(chunk.Size-1)) * kc.lanes
	return kc.first[id>>chunk.Bits][off : off+kc.lanes : off+kc.lanes]
}

// prefetch starts loading the counts of key id.
func (kc *keyCounts) prefetch(id uint32) {
	if c := int(id >> chunk.Bits); c < len(kc.hot) {
		prefetch.Range(unsafe.Pointer(&kc.hot[c][int(id&(chunk.Size-1))*kc.stride]), uintptr(kc.stride)*8)
	}
}

// added gives id, new for key, the counts key had when it was forgotten.
func (kc *keyCounts) added(id uint32, key []byte) {
	if len(kc.retired) == 0 {
		return
	}
	if r, ok := kc.retired[string(key)]; ok {
		copy(kc.entry(id), r.hot)
		copy(kc.firsts(id), r.first)
		delete(kc.retired, string(key))
	}
}

// forget keeps the counts of key id aside, as id is about to stand for
// another key, and clears them.
func (kc *keyCounts) forget(id uint32, key []byte) {
	if int(id>>chunk.Bits) >= len(kc.hot) {
		return
	}
	e, f := kc.entry(id), kc.firsts(id)
	if e[0] != 0 {
		kc.retired[string(key)] = &retiredCounts{hot: slices.Clone(e), first: slices.Clone(f)}
	}
	clear(e)
	clear(f)
}

// reject counts the rejections of one request of key id, whose counts
// are e, by the lanes in mask, bit j being lane base+j; oracle says the
// oracle allowed it, and timeText is its time as written.
func (kc *keyCounts) reject(id uint32, e []int64, base int, mask uint64, oracle bool, timeText []byte) {
	for m := mask; m != 0; m &= m - 1 {
		l := base + bits.TrailingZeros64(m)
		c := e[1+2*l : 3+2*l]
		if c[0] == 0 {
			kc.firsts(id)[l] = textSpan{len(kc.text), len(timeText)}
			kc.text = append(kc.text, timeText...)
		}
		c[0]++
		if oracle {
			c[1]++
		}
	}
}

// moreRejected reports whether a ranks before b in a list of the keys a
// lane rejected most: more rejections, then fewer requests, then the key.
func moreRejected(a, b KeyRejections) bool {
	if a.Rejected != b.Rejected {
		return a.Rejected > b.Rejected
	}
	if a.Requests != b.Requests {
		return a.Requests < b.Requests
	}
	return a.Key < b.Key
}

// most returns the n keys lane l rejected most, first first, leaving out
// those it never rejected; keys names the ids held.
func (kc *keyCounts) most(keys *interner, l, n int) []KeyRejections {
	// candidate is a key's counts: of id, or when retired, of key.
	type candidate struct {
		rejected, requests int64
		id                 uint32
		retired            bool
		key                string
	}
	name := func(c candidate) []byte {
		if c.retired {
			return []byte(c.key)
		}
		return keys.key(c.id)
	}
	// before reports whether a ranks before b, as moreRejected does.
	before := func(a, b candidate) bool {
		if a.rejected != b.rejected {
			return a.rejected > b.rejected
		}
		if a.requests != b.requests {
			return a.requests < b.requests
		}
		return bytes.Compare(name(a), name(b)) < 0
	}
	// The list grows with the keys there are, not with n: a list of a
	// billion asked of a trace of two keys takes two entries.
	top := make([]candidate, 0, min(n, keys.Len()+len(kc.retired))+1)
	offer := func(c candidate) {
		if c.rejected == 0 || (len(top) == n && !before(c, top[n-1])) {
			return
		}
		i := len(top)
		for i > 0 && before(c, top[i-1]) {
			i--
		}
		top = slices.Insert(top, i, c)
		top = top[:min(len(top), n)]
	}
	for id := range uint32(min(keys.ids(), len(kc.hot)*chunk.Size)) {
		if keys.held(id) {
			e := kc.entry(id)
			offer(candidate{rejected: e[1+2*l], requests: e[0], id: id})
		}
	}
	for key, r := range kc.retired {
		offer(candidate{rejected: r.hot[1+2*l], requests: r.hot[0], retired: true, key: key})
	}
	out := make([]KeyRejections, len(top))
	for i, c := range top {
		var e []int64
		var f []textSpan
		if c.retired {
			r := kc.retired[c.key]
			e, f = r.hot, r.first
		} else {
			e, f = kc.entry(c.id), kc.firsts(c.id)
		}
		out[i] = KeyRejections{Key: string(name(c)), Requests: c.requests, Rejected: c.rejected, FalseRejects: e[2+2*l],
			FirstRejection: string(kc.text[f[l].off : f[l].off+f[l].len])}
	}
	return out
}

// mergeMostRejected merges the lists of the keys a lane rejected most of
// workers, which own different keys, into the first n of them.
func mergeMostRejected(lists [][]KeyRejections, n int) []KeyRejections {
	var all []KeyRejections
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.SortFunc(all, func(a, b KeyRejections) int {
		if moreRejected(a, b) {
			return -1
		}
		return 1 // keys differ: never equal
	})
	return all[:min(n, len(all))]
}
