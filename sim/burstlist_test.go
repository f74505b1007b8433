package sim

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// TestBurstListsMatchRings replays random traces (in and out of time
// order, with costs up to and past what a list holds, keys that come and
// go) through random lanes (queues among them, some alike, under either
// clock, with and without a top list, keys kept or forgotten) with the
// keys' bursts in lists and kept in rings only, and checks that every
// figure of the report is the same. It checks too that keys both stayed
// in their lists and spilled out of them.
func TestBurstListsMatchRings(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	var listed, spills, dropped int64
	ranHook = func(e *engine) {
		for _, wk := range e.workers {
			if wk.burst != nil {
				listed += wk.burst.listed
				spills += wk.burst.spills
				if wk.burst.listsOff {
					dropped++
				}
			}
		}
	}
	defer func() { ranHook = nil }()
	for trial := range 36 {
		lanes := randomBurstLanes(rng, trial)
		var events []event
		switch trial % 3 {
		case 0:
			events = churnTrace(rng, 2500, true)
		case 1:
			events = backTrace(rng, 2500)
		default:
			events = randomTrace(rng, 2500, 1+rng.IntN(40), trial%2 == 0)
		}
		for i := range events {
			if rng.IntN(200) == 0 {
				events[i].cost = 256 + int64(rng.IntN(3)) // past what a list holds
			}
		}
		cfg := Config{Lanes: lanes, Policy: limiters.Policy{Limit: 3, Window: 2 * time.Second, Clock: limiters.Clock(trial % 2)},
			Workers: 1 + trial%2, KeepKeys: trial%4 == 1, sweepAt: 32, Interval: time.Duration(1+rng.IntN(3)) * time.Second}
		if trial%4 == 2 {
			cfg.Top = 4
		}
		_, withLists := collectAllowed(t, events, cfg)
		// Lists dropped part way through the trace, once a few keys
		// have spilled (see listsOffAfter).
		cfg.listsOffAfter = int64(1 + rng.IntN(30))
		_, dropping := collectAllowed(t, events, cfg)
		cfg.noLists = true
		_, ringsOnly := collectAllowed(t, events, cfg)
		if diff := quickDiff(ringsOnly, withLists); diff != "" {
			t.Fatalf("trial %d %+v: report (-rings +lists):\n%s", trial, lanes, diff)
		}
		if diff := quickDiff(ringsOnly, dropping); diff != "" {
			t.Fatalf("trial %d %+v, lists dropped after %d spills: report (-rings +lists):\n%s", trial, lanes, cfg.listsOffAfter, diff)
		}
	}
	if listed == 0 || spills == 0 || dropped == 0 {
		t.Fatalf("the lists took %d requests, %d keys spilled, and %d runs dropped their lists: all must happen", listed, spills, dropped)
	}
}

// backTrace makes a trace of a few keys that send a request or two now
// and then, a window or so apart, and go back in time within a window
// often: lanes that count in aligned windows then take requests earlier
// than their newest, which reach back to requests before the interval of
// the newest.
func backTrace(rng *rand.Rand, n int) []event {
	var out []event
	now := make([]int64, 4)
	for len(out) < n {
		u := rng.IntN(len(now))
		switch x := rng.IntN(6); {
		case x == 0:
			now[u] -= int64(rng.IntN(3000)) * int64(time.Millisecond)
		default:
			now[u] += int64(rng.IntN(2500)) * int64(time.Millisecond)
		}
		out = append(out, event{user: fmt.Sprint("b", u), time: now[u], cost: 1})
	}
	return out
}

// randomBurstLanes returns 1 to 10 lanes of random kinds and policies
// under the clock trial%2, some of them alike.
func randomBurstLanes(rng *rand.Rand, trial int) []Lane {
	algs := limiters.AllAlgorithms()
	var lanes []Lane
	for i := range 1 + rng.IntN(10) {
		a := algs[rng.IntN(len(algs))]
		p := limiters.Policy{
			Limit:    int64(1 + rng.IntN(6)),
			Window:   time.Duration(1+rng.IntN(4)) * time.Second,
			Capacity: int64(1 + rng.IntN(6)),
			Rate:     limiters.Rate{N: int64(1 + rng.IntN(3)), Per: time.Duration(1+rng.IntN(4)) * time.Second},
			Clock:    limiters.Clock(trial % 2),
		}
		if rng.IntN(3) == 0 && len(lanes) > 0 {
			p = lanes[rng.IntN(len(lanes))].Policy // alike lanes share a ring
		}
		lanes = append(lanes, Lane{Name: fmt.Sprintf("%v-%d", a, i), Algorithm: a, Policy: p})
	}
	return lanes
}

// TestBurstListsDropped replays traces where most keys spill and a few
// send a request or two, so that the lists are dropped (see
// listsOffAfter) while some keys are still in them, and checks that the
// report is the one of rings alone.
func TestBurstListsDropped(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	var drops, listedAtDrop int64
	ranHook = func(e *engine) {
		for _, wk := range e.workers {
			if wk.burst != nil && wk.burst.listsOff {
				drops++
				listedAtDrop += wk.burst.dropSpills
			}
		}
	}
	defer func() { ranHook = nil }()
	for trial := range 24 {
		lanes := randomBurstLanes(rng, trial)
		// 20 keys that keep sending, and now and then a new key that
		// sends one request or two.
		var events []event
		now := int64(0)
		for light := 0; len(events) < 3000; {
			now += int64(rng.IntN(20)) * int64(time.Millisecond)
			if rng.IntN(40) == 0 {
				u := fmt.Sprint("light", light)
				light++
				for range 1 + rng.IntN(2) {
					events = append(events, event{user: u, time: now, cost: 1 + int64(rng.IntN(2))})
				}
				continue
			}
			events = append(events, event{user: fmt.Sprint("heavy", rng.IntN(20)), time: now, cost: 1})
		}
		cfg := Config{Lanes: lanes, Policy: limiters.Policy{Limit: 3, Window: 2 * time.Second, Clock: limiters.Clock(trial % 2)},
			Workers: 1 + trial%2, KeepKeys: trial%3 == 1, sweepAt: 32, Interval: time.Duration(1+rng.IntN(3)) * time.Second,
			listsOffAfter: int64(1 + rng.IntN(16))}
		if trial%4 == 2 {
			cfg.Top = 4
		}
		_, dropping := collectAllowed(t, events, cfg)
		cfg.noLists = true
		_, ringsOnly := collectAllowed(t, events, cfg)
		if diff := quickDiff(ringsOnly, dropping); diff != "" {
			t.Fatalf("trial %d %+v, lists dropped after %d spills: report (-rings +lists):\n%s", trial, lanes, cfg.listsOffAfter, diff)
		}
	}
	if drops == 0 || listedAtDrop == 0 {
		t.Fatalf("%d runs dropped their lists, spilling %d keys still in them: both must happen", drops, listedAtDrop)
	}
}

// ringView returns what ring l of bt holds for key id: its entries, in
// order, and the cost of those inside the interval that ends at its
// newest, read from the key's list while it has not spilled.
func ringView(bt *burstTracker, l int, id uint32) (entries []burstEntry, total int64) {
	if b := bt.listBit[l]; b >= 0 {
		if k := bt.lists.Get(uint64(id)); k != nil && !k.spilled() {
			for i := range k.len() {
				if k.rings(i)&(1<<b) != 0 {
					entries = append(entries, burstEntry{k.t[i], k.cost(i)})
				}
			}
			for _, e := range entries {
				if !bt.before(e.time, entries[len(entries)-1].time) {
					total += e.cost
				}
			}
			return entries, total
		}
	}
	s := bt.slots[l].Get(uint64(id))
	if s == nil {
		return nil, 0
	}
	r, wrap := bt.ring(s)
	for i := uint32(0); i < s.n; i++ {
		entries = append(entries, r[(s.head+i)&wrap])
	}
	return entries, s.total
}

// TestBurstListHoldsRings drives two trackers with the same requests, one
// keeping keys in lists (in half the trials dropping them part way) and
// one in rings only, and checks after every request that each ring of each
// key holds the same entries in both, and that both find the same worst
// intervals, key by key.
func TestBurstListHoldsRings(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	const keys = 5
	for trial := range 60 {
		nrings := 1 + rng.IntN(5)
		interval := int64(1+rng.IntN(4)) * 1000
		align, bound := make([]int64, nrings), make([]int64, nrings)
		ringOf := make([]int, nrings)
		for l := range nrings {
			ringOf[l] = l
			bound[l] = int64(4 + rng.IntN(60)) // some close, some never do
			if rng.IntN(2) == 0 {
				align[l] = int64(1+rng.IntN(4)) * 1000 // a window that takes requests back within it
			}
		}
		trackers := [2]*burstTracker{}
		top := rng.IntN(3) * keys // with top > 0, every key's best
		for i := range trackers {
			trackers[i] = newBurstTracker(interval, align, bound, ringOf, top)
			trackers[i].listBits(make([]bool, nrings), i == 1, 0)
		}
		lists, rings := trackers[0], trackers[1]
		// In half the trials, the lists are dropped part way (see
		// listsOffAfter).
		dropAt := -1
		if trial%2 == 0 {
			dropAt = rng.IntN(400)
		}
		now := make([]int64, keys)
		for step := range 400 {
			if step == dropAt {
				lists.dropLists()
			}
			id := uint32(rng.IntN(keys))
			switch x := rng.IntN(8); {
			case x == 0:
				now[id] -= int64(rng.IntN(3000))
			case x < 3:
			default:
				now[id] += int64(rng.IntN(1500))
			}
			tm, c := now[id], int64(1+rng.IntN(3))
			if rng.IntN(50) == 0 {
				c = 300
			}
			// The rings that allowed it, of those still tracked: the worker
			// records no other.
			var open uint64
			for l := range nrings {
				if rings.tracks(l) {
					open |= 1 << l
				}
			}
			m := uint64(rng.IntN(1<<nrings-1)+1) & open
			seq := int64(step)
			if m != 0 && rng.IntN(20) == 0 {
				// A lane under the clamp clock takes a request later than
				// its own time: through its ring, as the worker does.
				l := bits.TrailingZeros64(m)
				for _, bt := range trackers {
					bt.record(id, uint64(id), l, tm+1, c, seq)
				}
				m &^= 1 << l
			}
			if m != 0 {
				if lists.listsOff {
					for r := m; r != 0; r &= r - 1 {
						lists.record(id, uint64(id), bits.TrailingZeros64(r), tm, c, seq)
					}
				} else {
					lists.recordList(id, uint64(id), m, tm, c, seq)
				}
				for r := m; r != 0; r &= r - 1 {
					rings.record(id, uint64(id), bits.TrailingZeros64(r), tm, c, seq)
				}
			}
			if later := tm + int64(rng.IntN(6000)); rng.IntN(10) == 0 {
				if a, b := lists.idle(id, later), rings.idle(id, later); a != b {
					t.Fatalf("trial %d step %d: key %d idle at %d: %v with lists, %v with rings", trial, step, id, later, a, b)
				} else if a {
					for _, bt := range trackers {
						bt.reset(id)
					}
				}
			}
			for l := range nrings {
				for k := range uint32(keys) {
					le, lt := ringView(lists, l, k)
					re, rt := ringView(rings, l, k)
					if lists.tracks(l) != rings.tracks(l) {
						t.Fatalf("trial %d step %d: ring %d tracked %v with lists, %v with rings", trial, step, l, lists.tracks(l), rings.tracks(l))
					}
					if !lists.tracks(l) {
						continue
					}
					if !slices.Equal(re, le) || lt != rt {
						t.Fatalf("trial %d step %d: ring %d of key %d: %v totalling %d with lists, %v totalling %d with rings", trial, step, l, k, le, lt, re, rt)
					}
				}
			}
		}
		for l := range nrings {
			if a, b := lists.best[l], rings.best[l]; a != b {
				t.Fatalf("trial %d: ring %d's best %+v with lists, %+v with rings", trial, l, a, b)
			}
			for k := range uint32(keys) {
				if a, b := lists.keyBst[l].Get(uint64(k)), rings.keyBst[l].Get(uint64(k)); (a == nil) != (b == nil) || a != nil && *a != *b {
					t.Fatalf("trial %d: ring %d, key %d: best %+v with lists, %+v with rings", trial, l, k, a, b)
				}
			}
		}
	}
}

// TestBurstListsDropRule checks when the lists are dropped: not where
// keys stay in them (each sends two requests, as in bench/livegen), even
// though more than listsOffAfter others spill, if those are fewer than one
// in 64; and where more spill.
func TestBurstListsDropRule(t *testing.T) {
	var dropped []bool
	ranHook = func(e *engine) {
		for _, wk := range e.workers {
			dropped = append(dropped, wk.burst.listsOff)
		}
	}
	defer func() { ranHook = nil }()
	p := limiters.Policy{Limit: 100, Window: 10 * time.Second}
	cfg := Config{Lanes: []Lane{
		{Name: "fixed-window", Algorithm: limiters.FixedWindow, Policy: p},
		{Name: "sliding-log", Algorithm: limiters.SlidingLog, Policy: p},
	}, Policy: p, Workers: 1, Interval: 10 * time.Second}
	for _, c := range []struct {
		spilling, staying int // keys sending 6 requests, and 2
		drop              bool
	}{{0, 3000, false}, {1100, 80000, false}, {1100, 60000, true}, {1500, 0, true}} {
		var events []event
		n := c.spilling + c.staying
		for k := range n {
			each := 2
			if k*c.spilling/n != (k+1)*c.spilling/n { // spread evenly
				each = 6
			}
			for i := range each {
				events = append(events, event{user: fmt.Sprint("k", k), time: int64(k/3+i) * int64(time.Millisecond), cost: 1})
			}
		}
		slices.SortStableFunc(events, func(a, b event) int { return int(a.time - b.time) })
		dropped = nil
		collectAllowed(t, events, cfg)
		if len(dropped) != 1 || dropped[0] != c.drop {
			t.Errorf("%d keys sending 6 requests each and %d sending 2: lists dropped %v, want %v", c.spilling, c.staying, dropped, c.drop)
		}
	}
}
