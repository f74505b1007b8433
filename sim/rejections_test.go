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
	// refusals' waits come with the decisions, from Group.AdmitWaits.
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

// TestWaitsTail checks that a replay keeping only the tail of each lane's
// waits (Config.WaitsTail) gives the high quantiles of the replay that
// keeps them all, and that it reports a quantile that fell among the
// waits it counted alone instead of giving a wrong one.
func TestWaitsTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	var lanes []Lane
	for i := range 12 {
		a := limiters.AllAlgorithms()[i%len(limiters.AllAlgorithms())]
		p := seedPolicy
		p.Limit, p.Window = int64(1+i%3), time.Duration(2+i%5)*time.Second
		p.Capacity, p.Rate = int64(1+i%4), limiters.Rate{N: 1, Per: time.Duration(1+i%3) * time.Second}
		lanes = append(lanes, Lane{Name: fmt.Sprintf("%v-%d", a, i), Algorithm: a, Policy: p})
	}
	for trial := range 4 {
		events := churnTrace(rng, 20000, false)
		for i := range events {
			events[i].user = events[i].user[:min(len(events[i].user), 2)] // few keys: many refusals
		}
		cfg := Config{Lanes: lanes, Policy: seedPolicy, Workers: 1 + trial%2, Rejections: true}
		full, err := Run(&sliceSource{events: events}, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg.WaitsTail, cfg.tailFrom = true, 64
		tail, err := Run(&sliceSource{events: events}, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		cut := false // some lane's p99 known with waits counted alone
		for a := range lanes {
			ft, tt := &full.Algos[a], &tail.Algos[a]
			if ft.WaitsBelow != 0 {
				t.Fatalf("trial %d, %s: WaitsBelow %d without WaitsTail", trial, lanes[a].Name, ft.WaitsBelow)
			}
			var total int64
			for _, d := range ft.Waits {
				total += d.Count
			}
			for _, q := range [][2]int64{{99, 100}, {95, 100}, {999, 1000}, {1, 1}} {
				want, wantOK := Quantile(ft.Waits, q[0], q[1])
				got, ok, known := tt.WaitQuantile(q[0], q[1])
				switch {
				case !known && (total == 0 || uint64(tt.WaitsBelow) < rankOf(total, q[0], q[1])):
					t.Errorf("trial %d, %s: quantile %d/%d unknown with the tail, though its rank is above the %d waits counted alone", trial, lanes[a].Name, q[0], q[1], tt.WaitsBelow)
				case known && (got != want || ok != wantOK):
					t.Errorf("trial %d, %s: quantile %d/%d with the tail = %v, %v; want %v, %v", trial, lanes[a].Name, q[0], q[1], got, ok, want, wantOK)
				case known && q[0] == 99 && tt.WaitsBelow > 0:
					cut = true
				}
			}
		}
		if !cut {
			t.Errorf("trial %d: no lane's p99 was known with waits counted alone: the test does not test the tail", trial)
		}
	}

	// Long waits first, then many more short ones: the p99 falls among the
	// waits counted alone, which must be reported, not guessed.
	var wc waitCounts
	wc.next = 64
	for i := range 1000 {
		wc.add(time.Duration(1000 + i%50))
	}
	for range 100000 {
		wc.add(1)
	}
	tailList, below, _ := mergeTail(nil, 0, 0, &wc)
	if below == 0 {
		t.Fatal("nothing counted alone")
	}
	if _, _, known := tailQuantile(tailList, below, 99, 100); known {
		t.Error("a p99 among the waits counted alone is known")
	}
	if w, ok, known := tailQuantile(tailList, below, 1, 1); !ok || !known || w != 1049 {
		t.Errorf("the longest wait = %v, %v, %v; want 1049ns", w, ok, known)
	}
}
