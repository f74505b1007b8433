package cmd

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// invariantChecker checks, lane by lane and key by key, the requests a
// store allowed against the most its algorithm may ever allow, whatever
// order the requests reached the store in. With --route spread the store
// decides a key's requests in no fixed order, so its decisions cannot be
// compared with the in-memory replay's; these bounds must hold all the
// same, and a store that races (--naive) breaks them.
//
//   - A window algorithm allows at most MaxInInterval(policy, window) of
//     cost for one key in any closed interval of its window's length: the
//     limit for the sliding log.
//   - A bucket (token, leaky, GCRA, queue) allows at most capacity + rate
//     × elapsed for one key between any two of its allowed requests: an
//     ideal meter that fills by each allowed cost and drains at the rate,
//     never refusing, must never hold more than the capacity.
//
// Requests are checked in trace order, at their trace times (a key's time
// never goes back in the check: an earlier one counts at the key's
// latest).
type invariantChecker struct {
	lanes []laneInvariant
	keys  map[string][]keyInvariant // per key, one per lane
	seen  int                       // requests since the last sweep
	now   int64                     // the latest time checked
}

// laneInvariant is one lane's bound and what the check found.
type laneInvariant struct {
	lane   sim.Lane
	bucket bool
	// Window lanes: the interval and the bound in it.
	window time.Duration
	bound  int64
	// Buckets: the capacity and the rate, n per per ns.
	capacity int64
	n, per   int64

	violations int64  // allowed requests that broke the bound
	maxExcess  int64  // the most cost beyond the bound, at once
	worstKey   string // where maxExcess was
	worstAt    []byte // the time text of the request that reached it
}

// keyInvariant is one key's state of the check under one lane: for a
// window lane the allowed requests of the last window, for a bucket the
// ideal meter's level, scaled by per.
type keyInvariant struct {
	last  int64 // the key's latest time
	level int64 // buckets: the meter's level × per
	total int64 // windows: the cost in log
	log   []costAt
}

type costAt struct{ t, cost int64 }

// sweepEvery is how many requests pass between sweeps of the keys whose
// check state is empty again.
const sweepEvery = 1 << 16

func newInvariantChecker(lanes []sim.Lane) *invariantChecker {
	ic := &invariantChecker{keys: map[string][]keyInvariant{}}
	for _, l := range lanes {
		li := laneInvariant{lane: l, bucket: !l.Algorithm.Windowed()}
		if li.bucket {
			li.capacity, li.n, li.per = l.Policy.Capacity, l.Policy.Rate.N, int64(l.Policy.Rate.Per)
		} else {
			li.window = l.Policy.Window
			li.bound = l.Algorithm.MaxInInterval(l.Policy, l.Policy.Window)
		}
		ic.lanes = append(ic.lanes, li)
	}
	return ic
}

// rule states lane l's bound: "at most 3 in any 10s", "at most capacity
// 3 + 0.3 per s × elapsed".
func (li *laneInvariant) rule(sp *policySpec) string {
	if li.bucket {
		return fmt.Sprintf("at most %d + %s per %s x elapsed", li.capacity, li.lane.Policy.Rate.Format(sp.Unit), unitName(sp.Unit))
	}
	return fmt.Sprintf("at most %d in any %s", li.bound, sp.Duration(li.window))
}

// add checks one request: d[l] is lane l's decision on it.
func (ic *invariantChecker) add(key, timeText []byte, t, cost int64, d []limiters.Decision) {
	ks, ok := ic.keys[string(key)]
	if !ok {
		ks = make([]keyInvariant, len(ic.lanes))
		for i := range ks {
			ks[i].last = math.MinInt64
		}
		ic.keys[string(key)] = ks
	}
	ic.now = max(ic.now, t)
	for l := range ic.lanes {
		if !d[l].Allowed {
			continue
		}
		li, k := &ic.lanes[l], &ks[l]
		at := max(t, k.last)
		var excess int64
		if li.bucket {
			excess = k.fill(li, at, cost)
		} else {
			excess = k.push(li, at, cost)
		}
		k.last = at
		if excess > 0 {
			li.violations++
			if excess > li.maxExcess {
				li.maxExcess, li.worstKey, li.worstAt = excess, string(key), append(li.worstAt[:0], timeText...)
			}
		}
	}
	if ic.seen++; ic.seen >= sweepEvery && len(ic.keys) > sweepEvery {
		ic.sweep()
	}
}

// fill adds cost at time at to the ideal meter and returns by how much
// it holds more than the capacity, in whole units (0 when it does not).
// The level is kept × per, so that a rate n per per ns drains exactly n
// per ns; sums saturate, which only a level far past the bound reaches.
func (k *keyInvariant) fill(li *laneInvariant, at, cost int64) int64 {
	if k.level > 0 {
		k.level = max(0, k.level-satMul(li.n, at-k.last))
	}
	k.level = satAdd(k.level, satMul(li.per, cost))
	over := k.level - satMul(li.per, li.capacity)
	if over <= 0 {
		return 0
	}
	return (over + li.per - 1) / li.per
}

// push adds cost at time at to the window's log and returns by how much
// the cost in the closed interval [at-window, at] passes the bound.
func (k *keyInvariant) push(li *laneInvariant, at, cost int64) int64 {
	from := at - int64(li.window)
	drop := 0
	for drop < len(k.log) && k.log[drop].t < from {
		k.total -= k.log[drop].cost
		drop++
	}
	if drop > 0 {
		k.log = append(k.log[:0], k.log[drop:]...)
	}
	k.log = append(k.log, costAt{at, cost})
	k.total = satAdd(k.total, cost)
	return max(0, k.total-li.bound)
}

// idle reports whether a key's check state is empty again at now: its
// meter drained, its window's requests all older than the window.
func (ic *invariantChecker) idle(ks []keyInvariant, now int64) bool {
	for l := range ks {
		li, k := &ic.lanes[l], &ks[l]
		if k.last == math.MinInt64 {
			continue
		}
		if li.bucket {
			if k.level > satMul(li.n, now-k.last) {
				return false
			}
		} else if len(k.log) > 0 && k.log[len(k.log)-1].t >= now-int64(li.window) {
			return false
		}
	}
	return true
}

// sweep forgets the keys whose state is empty again, so that memory
// follows the live keys. A forgotten key starts again from an empty
// state, which is where it was, unless the trace goes back in time past
// the sweep; then the check only sees less.
func (ic *invariantChecker) sweep() {
	ic.seen = 0
	for key, ks := range ic.keys {
		if ic.idle(ks, ic.now) {
			delete(ic.keys, key)
		}
	}
}

// satMul returns a*b for a, b >= 0, saturating at math.MaxInt64.
func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// satAdd returns a+b for a, b >= 0, saturating at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
