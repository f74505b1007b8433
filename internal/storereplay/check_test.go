package storereplay

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// feed gives the checker's lane 0 one allowed request of cost at t.
func feed(c *checker, key string, t, cost int64) {
	c.add([]byte(key), []byte(fmt.Sprint(t)), cost, []bool{true}, []int64{t})
}

func lane(a limiters.Algorithm, p limiters.Policy) []Lane {
	return []Lane{{Name: a.String(), Algorithm: a, Policy: p}}
}

// TestBoundsAreTight: each algorithm's bound is its tight one: a fixed
// window (and a sliding counter) holds the limit per aligned window, so
// 60 in one window of a limit of 50 breaks it, while 100 across an edge
// does not; the sliding log holds it in any closed window; sliding
// buckets in any run of their sub-windows; a bucket capacity + rate x
// elapsed. (The check used three times the limit per window for the
// aligned windows: a naive store let 102 through one window of 50 and
// the check said it held.)
func TestBoundsAreTight(t *testing.T) {
	const s = int64(time.Second)
	fixed := limiters.Policy{Limit: 50, Window: 10 * time.Second}
	for _, tc := range []struct {
		name   string
		lanes  []Lane
		events [][2]int64 // time, cost
		broken bool
	}{
		{"fixed: 60 in one window", lane(limiters.FixedWindow, fixed), [][2]int64{{1 * s, 30}, {9 * s, 30}}, true},
		{"fixed: 100 across an edge", lane(limiters.FixedWindow, fixed), [][2]int64{{9 * s, 50}, {10 * s, 50}}, false},
		{"counter: 51 in one window", lane(limiters.SlidingCounter, fixed), [][2]int64{{0, 50}, {10*s - 1, 1}}, true},
		{"hits: 50 per window", lane(limiters.FixedWindowHits, fixed), [][2]int64{{0, 50}, {10 * s, 50}, {20 * s, 50}}, false},
		{"log: 51 in a closed window", lane(limiters.SlidingLog, fixed), [][2]int64{{0, 50}, {10 * s, 1}}, true},
		{"log: 100, a window and a ns apart", lane(limiters.SlidingLog, fixed), [][2]int64{{0, 50}, {10*s + 1, 50}}, false},
		{"buckets: 51 in 10 sub-windows", lane(limiters.SlidingBuckets, fixed), [][2]int64{{0, 25}, {9 * s, 26}}, true},
		{"buckets: 100, 10 sub-windows apart", lane(limiters.SlidingBuckets, fixed), [][2]int64{{s - 1, 50}, {10 * s, 50}}, false},
		{"bucket: capacity + rate x elapsed", lane(limiters.TokenBucket, limiters.Policy{Capacity: 5, Rate: limiters.Rate{N: 1, Per: time.Second}}), [][2]int64{{0, 5}, {3 * s, 3}}, false},
		{"bucket: one more", lane(limiters.GCRA, limiters.Policy{Capacity: 5, Rate: limiters.Rate{N: 1, Per: time.Second}}), [][2]int64{{0, 5}, {3 * s, 4}}, true},
	} {
		c := newChecker(tc.lanes)
		for _, e := range tc.events {
			feed(c, "u", e[0], e[1])
		}
		b := c.lanes[0].b
		if got := !b.Holds(); got != tc.broken {
			t.Errorf("%s: broken %v (%d violations, by up to %d), want %v", tc.name, got, b.Violations, b.MaxExcess, tc.broken)
		}
	}
}

// TestBoundsHoldForTheLimiters: on random traces, with costs, steps back
// in time and both clock rules, the requests the in-memory limiters
// allow, at the times they judged them, keep every algorithm's bound,
// whatever order they reach the check in (a key's requests shuffled a
// little, as --route spread shuffles them); the same requests allowed
// twice break it.
func TestBoundsHoldForTheLimiters(t *testing.T) {
	for _, a := range limiters.AllAlgorithms() {
		for _, clock := range []limiters.Clock{limiters.ClockReject, limiters.ClockClamp} {
			p := limiters.Policy{Limit: 6, Window: time.Second, Capacity: 6, Rate: limiters.Rate{N: 5, Per: time.Second}, Clock: clock, Buckets: 4}
			tb, err := limiters.NewTable(a, p)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(a), uint64(clock)))
			type ev struct {
				key      string
				at, cost int64
				seq      int
			}
			var allowed []ev
			now := int64(0)
			for i := range 20000 {
				now += rng.Int64N(int64(40 * time.Millisecond))
				id := rng.IntN(20)
				at := now
				if rng.IntN(20) == 0 {
					at -= rng.Int64N(int64(100 * time.Millisecond)) // back in time
				}
				cost := 1 + rng.Int64N(3)
				if d := tb.Allow(uint32(id), at, cost); d.Allowed {
					allowed = append(allowed, ev{fmt.Sprint(id), tb.DecidedAt(uint32(id), at), cost, i})
				}
			}
			// Out of order by up to 8 places.
			for i := range allowed {
				if j := i + rng.IntN(8); j < len(allowed) {
					allowed[i], allowed[j] = allowed[j], allowed[i]
				}
			}
			c := newChecker(lane(a, p))
			twice := newChecker(lane(a, p))
			for _, e := range allowed {
				feed(c, e.key, e.at, e.cost)
				feed(twice, e.key, e.at, e.cost)
				feed(twice, e.key, e.at, e.cost)
			}
			if b := c.lanes[0].b; !b.Holds() {
				t.Errorf("%v, clock %v: %d of %d allowed requests broke the bound, by up to %d (key %s at %s)", a, clock, b.Violations, len(allowed), b.MaxExcess, b.WorstKey, b.WorstAt)
			}
			if b := twice.lanes[0].b; b.Holds() {
				t.Errorf("%v, clock %v: every request allowed twice kept the bound", a, clock)
			}
		}
	}
}
