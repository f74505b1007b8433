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
// rejection, exactly. A key's counts live in an entry that outlives its
// id, so that a key forgotten as idle and met again goes on counting
// where it stopped.
type keyCounts struct {
	lanes int
	// slab holds stride int64s an entry: the requests, then per lane the
	// rejections, the false rejections and where the time text of the
	// first rejection is in text (offset and length).
	slab   []int64
	stride int
	keys   []textSpan          // per entry, its key in text
	byID   chunk.Array[uint32] // per key id, its entry + 1; 0: not linked
	byKey  map[string]uint32   // per key, its entry
	text   []byte              // keys and times, back to back
}

// textSpan locates bytes in keyCounts.text.
type textSpan struct{ off, len int }

func newKeyCounts(lanes int) *keyCounts {
	return &keyCounts{lanes: lanes, stride: 1 + 4*lanes, byKey: map[string]uint32{}}
}

// entry returns the counts of key id.
func (kc *keyCounts) entry(id uint32, key []byte) []int64 {
	p := kc.byID.At(uint64(id))
	if *p == 0 {
		e, ok := kc.byKey[string(key)]
		if !ok {
			e = uint32(len(kc.keys))
			kc.keys = append(kc.keys, kc.store(key))
			kc.slab = append(kc.slab, make([]int64, kc.stride)...)
			kc.byKey[string(key)] = e
		}
		*p = e + 1
	}
	off := int(*p-1) * kc.stride
	return kc.slab[off : off+kc.stride : off+kc.stride]
}

// prefetch starts loading the counts of key id, when it has them.
func (kc *keyCounts) prefetch(id uint32) {
	if p := kc.byID.Get(uint64(id)); p != nil && *p != 0 {
		prefetch.Range(unsafe.Pointer(&kc.slab[int(*p-1)*kc.stride]), uintptr(kc.stride)*8)
	}
}

func (kc *keyCounts) store(b []byte) textSpan {
	s := textSpan{len(kc.text), len(b)}
	kc.text = append(kc.text, b...)
	return s
}

// forget drops id's link to its entry, as id is about to stand for
// another key.
func (kc *keyCounts) forget(id uint32) {
	if p := kc.byID.Get(uint64(id)); p != nil {
		*p = 0
	}
}

// reject counts the rejections of one request by the lanes in mask, bit
// j being lane base+j; oracle says the oracle allowed it, and timeText is
// its time as written.
func (kc *keyCounts) reject(e []int64, base int, mask uint64, oracle bool, timeText []byte) {
	for m := mask; m != 0; m &= m - 1 {
		c := e[1+4*(base+bits.TrailingZeros64(m)):]
		if c[0] == 0 {
			s := kc.store(timeText)
			c[2], c[3] = int64(s.off), int64(s.len)
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
// those it never rejected.
func (kc *keyCounts) most(l, n int) []KeyRejections {
	type candidate struct {
		rejected, requests int64
		e                  int
	}
	key := func(e int) []byte { s := kc.keys[e]; return kc.text[s.off : s.off+s.len] }
	// before reports whether a ranks before b, as moreRejected does.
	before := func(a, b candidate) bool {
		if a.rejected != b.rejected {
			return a.rejected > b.rejected
		}
		if a.requests != b.requests {
			return a.requests < b.requests
		}
		return bytes.Compare(key(a.e), key(b.e)) < 0
	}
	top := make([]candidate, 0, n+1)
	for e := range kc.keys {
		c := kc.slab[e*kc.stride:]
		cd := candidate{c[1+4*l], c[0], e}
		if cd.rejected == 0 || (len(top) == n && !before(cd, top[n-1])) {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, cd, func(a, b candidate) int {
			if before(a, b) {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, i, cd)
		top = top[:min(len(top), n)]
	}
	out := make([]KeyRejections, len(top))
	for i, cd := range top {
		c := kc.slab[cd.e*kc.stride+1+4*l:]
		out[i] = KeyRejections{Key: string(key(cd.e)), Requests: cd.requests, Rejected: c[0], FalseRejects: c[1],
			FirstRejection: string(kc.text[c[2] : c[2]+c[3]])}
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
