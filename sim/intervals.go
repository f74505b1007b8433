package sim

import (
	"maps"
	"slices"
)

// IntervalCounts are the counts of one interval of Config.Every.
type IntervalCounts struct {
	Start    int64 // ns: a multiple of Config.Every
	Requests int64
	// Keys counts the keys with a request in the interval.
	Keys  int64
	Lanes []LaneCounts // per lane
}

// LaneCounts are one lane's counts in an interval.
type LaneCounts struct {
	Allowed      int64
	FalseAllows  int64 // allowed while the oracle rejected
	FalseRejects int64 // rejected while the oracle allowed
}

// intervals counts, for one worker and Config.Every, the requests of its
// keys per interval, and per lane the allowed, false allows and false
// rejects. Counts of different workers add up, as each request is one
// worker's.
type intervals struct {
	every int64
	lanes int
	by    map[int64][]int64 // per interval: requests, keys, then 3 per lane
	k     int64             // the interval of cur
	cur   []int64
	// seenIn is, per key id, 1 + the interval it last had a request in;
	// 0 for none since the id was given to its key.
	seenIn []int64
}

func newIntervals(every int64, lanes int) *intervals {
	return &intervals{every: every, lanes: lanes, by: map[int64][]int64{}}
}

// add counts a request at t of the key with id (added: the id was just
// given to it): the lanes that allowed it are those of mask, the first
// n0, then those of more, a word each (see wordOf), and oracle says
// whether the oracle did.
func (iv *intervals) add(t int64, id uint32, added, oracle bool, mask uint64, n0 int, more []uint64) {
	k := floorDiv(t, iv.every)
	if iv.cur == nil || k != iv.k {
		if iv.cur = iv.by[k]; iv.cur == nil {
			iv.cur = make([]int64, 2+3*iv.lanes)
			iv.by[k] = iv.cur
		}
		iv.k = k
	}
	c := iv.cur
	c[0]++
	if int(id) >= len(iv.seenIn) {
		iv.seenIn = append(iv.seenIn, make([]int64, int(id)+1-len(iv.seenIn))...)
	}
	if added || iv.seenIn[id] != k+1 {
		iv.seenIn[id] = k + 1
		c[1]++
	}
	c = c[1:] // the lanes' counts start at c[1]
	for l := range iv.lanes {
		m := mask
		word, bit := wordOf(l, n0)
		if word > 0 {
			m = more[word-1]
		}
		switch {
		case m&(1<<bit) != 0:
			c[1+3*l]++
			if !oracle {
				c[2+3*l]++
			}
		case oracle:
			c[3+3*l]++
		}
	}
}

// current reports whether the key with id had a request in the interval
// of latest: it counts among that interval's keys, so it is not forgotten
// before the interval ends, lest it come back and count twice.
func (iv *intervals) current(id uint32, latest int64) bool {
	return int(id) < len(iv.seenIn) && iv.seenIn[id] == floorDiv(latest, iv.every)+1
}

// mergeIntervals adds up the counts of workers, in time order.
func mergeIntervals(workers []*intervals, every int64, lanes int) []IntervalCounts {
	sum := map[int64][]int64{}
	for _, iv := range workers {
		for k, c := range iv.by {
			s := sum[k]
			if s == nil {
				s = make([]int64, len(c))
				sum[k] = s
			}
			for i, v := range c {
				s[i] += v
			}
		}
	}
	out := make([]IntervalCounts, 0, len(sum))
	for _, k := range slices.Sorted(maps.Keys(sum)) {
		c := sum[k]
		ic := IntervalCounts{Start: k * every, Requests: c[0], Keys: c[1], Lanes: make([]LaneCounts, lanes)}
		for l := range lanes {
			ic.Lanes[l] = LaneCounts{Allowed: c[2+3*l], FalseAllows: c[3+3*l], FalseRejects: c[4+3*l]}
		}
		out = append(out, ic)
	}
	return out
}

// floorDiv is a/b rounded down, for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
