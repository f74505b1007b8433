package sim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// TestRejections checks KeysRejected and Waits against limiters.Keyed
// decisions counted the obvious way: for runs of one mask word and of
// several, with workers that forget idle keys often (a key forgotten and
// met again must not count twice), and with costs no wait cures.
func TestRejections(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	// With a queue lane every decision is made in full; without, the
	// refusals' waits are worked out again by Group.RefusedWaits.
	noQueue := slices.DeleteFunc(limiters.AllAlgorithms(), limiters.Algorithm.Delays)
	for _, c := range []struct {
		nlanes int
		algs   []limiters.Algorithm
	}{{5, limiters.AllAlgorithms()}, {150, limiters.AllAlgorithms()}, {7, noQueue}, {150, noQueue}} {
		nlanes := c.nlanes
		var lanes []Lane
		for i := range nlanes {
			a := c.algs[i%len(c.algs)]
			p := seedPolicy
			p.Limit, p.Window = int64(1+i%5), time.Duration(2+i%7)*time.Second
			p.Capacity, p.Rate = int64(1+i%6), limiters.Rate{N: int64(1 + i%3), Per: time.Duration(1+i%4) * time.Second}
			lanes = append(lanes, Lane{Name: fmt.Sprintf("%v-%d", a, i), Algorithm: a, Policy: p})
		}
		for trial := range 2 {
			events := churnTrace(rng, 3000, false)
			for i := range events {
				if rng.IntN(50) == 0 {
					events[i].cost = 7 // above some capacities: never allowed
				}
			}
			cfg := Config{Lanes: lanes, Policy: seedPolicy, Workers: 1 + trial, Rejections: true, sweepAt: 64}
			rep, err := Run(&sliceSource{events: events}, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			for a, lane := range lanes {
				k, err := limiters.NewKeyed(lane.Algorithm, lane.Policy)
				if err != nil {
					t.Fatal(err)
				}
				rejected := map[string]bool{}
				counts := map[time.Duration]int64{}
				for _, e := range events {
					if d := k.Allow(e.user, e.time, e.cost); !d.Allowed {
						rejected[e.user] = true
						counts[d.RetryAfter]++
					}
				}
				var waits []DurationCount
				for w, c := range counts {
					waits = append(waits, DurationCount{w, c})
				}
				slices.SortFunc(waits, func(x, y DurationCount) int { return cmp.Compare(x.Wait, y.Wait) })
				got := rep.Algos[a]
				if got.KeysRejected != int64(len(rejected)) {
					t.Errorf("%d lanes, trial %d, %s: KeysRejected %d, want %d", nlanes, trial, lane.Name, got.KeysRejected, len(rejected))
				}
				if diff := quickDiff(waits, got.Waits); diff != "" {
					t.Errorf("%d lanes, trial %d, %s: Waits (-want +got):\n%s", nlanes, trial, lane.Name, diff)
				}
			}
			if rep.KeysHeld >= rep.Keys {
				t.Errorf("%d lanes, trial %d: no key was forgotten (%d held of %d): the test does not test forgetting", nlanes, trial, rep.KeysHeld, rep.Keys)
			}
		}
	}
}

func TestQuantile(t *testing.T) {
	waits := []DurationCount{{1, 90}, {5, 9}, {20, 1}}
	for _, c := range []struct {
		num, den int64
		want     time.Duration
	}{
		{99, 100, 5},   // rank 99 of 100: the 99th is a 5
		{100, 100, 20}, // the largest
		{90, 100, 1},   // rank 90: the last 1
		{91, 100, 5},
		{0, 100, 1}, // rank at least 1
	} {
		if got, ok := Quantile(waits, c.num, c.den); !ok || got != c.want {
			t.Errorf("Quantile(%d/%d) = %v, %v; want %v", c.num, c.den, got, ok, c.want)
		}
	}
	if _, ok := Quantile(nil, 99, 100); ok {
		t.Error("Quantile of nothing is ok")
	}
	if _, ok := Quantile(waits, 101, 100); ok {
		t.Error("Quantile above 1 is ok")
	}
	// 1 of 3 values: rank ceil(3*99/100) = 3.
	if got, _ := Quantile([]DurationCount{{1, 2}, {2, 1}}, 99, 100); got != 2 {
		t.Errorf("p99 of 1, 1, 2 = %v, want 2", got)
	}
}
