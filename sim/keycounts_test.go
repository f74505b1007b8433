package sim

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// TestMostRejected checks each lane's most rejected keys against a count
// of every request's decisions, for one to three workers, keys kept or
// forgotten as idle, and more lanes than one mask word holds.
func TestMostRejected(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	events := randomTrace(rng, 6000, 40, true)
	events = append(events, churnTrace(rng, 3000, false)...)
	var many []Lane
	for c := range 70 {
		p := seedPolicy
		p.Capacity = int64(1 + c%9)
		many = append(many, Lane{Name: "tb" + strconv.Itoa(c), Algorithm: limiters.TokenBucket, Policy: p})
	}
	configs := []Config{
		{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy},
		{Algorithms: limiters.AllAlgorithms(), Policy: seedPolicy, Top: 3},
		{Lanes: many, Policy: seedPolicy},
	}
	// The exact decisions depend on the events alone: one replay serves
	// every configuration.
	_, oracle, _ := collect(t, events, Config{Algorithms: []limiters.Algorithm{limiters.SlidingLog}, Policy: seedPolicy})
	for c, cfg := range configs {
		for _, workers := range []int{1, 2, 3} {
			for _, keep := range []bool{true, false} {
				name := fmt.Sprintf("config %d, %d workers, keep %v", c, workers, keep)
				cfg := cfg
				cfg.Workers, cfg.KeepKeys, cfg.MostRejected = workers, keep, 4
				if !keep {
					cfg.sweepAt = 64
				}
				allowed, rep := collectAllowed(t, events, cfg)
				for l := range allowed {
					want := countRejected(events, allowed[l], oracle, cfg.MostRejected)
					if diff := quickDiff(want, rep.Algos[l].MostRejected); diff != "" {
						t.Fatalf("%s, lane %d (-counted +got):\n%s", name, l, diff)
					}
				}
			}
		}
	}
}

// countRejected lists the n keys rejected most, counted request by
// request.
func countRejected(events []event, allowed, oracle []bool, n int) []KeyRejections {
	byKey := map[string]*KeyRejections{}
	for i, e := range events {
		k := byKey[e.user]
		if k == nil {
			k = &KeyRejections{Key: e.user}
			byKey[e.user] = k
		}
		k.Requests++
		if allowed[i] {
			continue
		}
		if k.Rejected == 0 {
			k.FirstRejection = strconv.FormatFloat(float64(e.time)/float64(time.Second), 'f', -1, 64)
		}
		k.Rejected++
		if oracle[i] {
			k.FalseRejects++
		}
	}
	var list []KeyRejections
	for _, k := range byKey {
		if k.Rejected > 0 {
			list = append(list, *k)
		}
	}
	slices.SortFunc(list, func(a, b KeyRejections) int {
		if c := cmp.Compare(b.Rejected, a.Rejected); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Requests, b.Requests); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	if len(list) == 0 {
		return nil
	}
	return list[:min(n, len(list))]
}

// TestIntervals checks Config.Every's counts against a count of every
// request's decisions, whatever the number of workers and lanes, and that
// a trace out of interval order is named by its first line out of order.
func TestIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	events := randomTrace(rng, 5000, 30, true)
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.time, b.time) })
	var many []Lane
	for c := range 70 {
		p := seedPolicy
		p.Capacity = int64(1 + c%9)
		many = append(many, Lane{Name: "tb" + strconv.Itoa(c), Algorithm: limiters.TokenBucket, Policy: p})
	}
	_, oracle, _ := collect(t, events, Config{Algorithms: []limiters.Algorithm{limiters.SlidingLog}, Policy: seedPolicy})
	// Intervals of 7s, and of 1000s, longer than the window, in which
	// keys go idle and are forgotten (sweepAt 2), their ids given to
	// other keys, which must count as keys of their own.
	for c, cfg := range []Config{{Algorithms: limiters.AllAlgorithms(), Policy: seedPolicy, Every: 7 * time.Second},
		{Lanes: many, Policy: seedPolicy, Every: 7 * time.Second},
		{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy, Every: 1000 * time.Second, sweepAt: 2}} {
		every := cfg.Every
		for _, workers := range []int{1, 2, 3} {
			cfg := cfg
			cfg.Workers = workers
			allowed, rep := collectAllowed(t, events, cfg)
			var want []IntervalCounts
			var keys map[string]bool
			for i, e := range events {
				start := floorDiv(e.time, int64(every)) * int64(every)
				if len(want) == 0 || want[len(want)-1].Start != start {
					want = append(want, IntervalCounts{Start: start, Lanes: make([]LaneCounts, len(allowed))})
					keys = map[string]bool{}
				}
				w := &want[len(want)-1]
				w.Requests++
				if !keys[e.user] {
					keys[e.user] = true
					w.Keys++
				}
				for l := range allowed {
					switch {
					case allowed[l][i]:
						w.Lanes[l].Allowed++
						if !oracle[i] {
							w.Lanes[l].FalseAllows++
						}
					case oracle[i]:
						w.Lanes[l].FalseRejects++
					}
				}
			}
			if diff := quickDiff(want, rep.Intervals); diff != "" || rep.IntervalsOutOfOrder != 0 {
				t.Fatalf("config %d, %d workers: out of order %d, intervals (-counted +got):\n%s", c, workers, rep.IntervalsOutOfOrder, diff)
			}
		}
	}
	every := 7 * time.Second
	back := append(slices.Clone(events[:100]), event{user: "late", time: events[0].time - int64(every), cost: 1})
	_, rep := collectAllowed(t, back, Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy, Every: every})
	if rep.IntervalsOutOfOrder != 102 || rep.Intervals != nil {
		t.Errorf("out of order at line %d, %d intervals; want line 102, none", rep.IntervalsOutOfOrder, len(rep.Intervals))
	}
}

// TestListsFollowKeys: a list of the keys a lane rejected most, or of the
// worst intervals, asked far longer than the keys there are takes memory
// for the keys there are, and lists them all; asked as long as an int
// goes, it neither overflows nor fails.
func TestListsFollowKeys(t *testing.T) {
	events := append(secs("u1", 0, 1), secs("u2", 5)...)
	for _, n := range []int{1 << 24, math.MaxInt} {
		cfg := Config{Algorithms: limiters.ClassicAlgorithms(), Policy: seedPolicy, Top: n, MostRejected: n}
		cfg.Policy.Limit, cfg.Policy.Capacity = 1, 1
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rep, err := Run(&sliceSource{events: events}, cfg, nil)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatalf("lists of %d: %v", n, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Errorf("lists of %d for 2 keys: %d MiB allocated", n, alloc>>20)
		}
		// Every lane refused u1 at 1, and allowed u1 and u2 once each.
		if got := len(rep.Top); got != 2*len(cfg.Algorithms) {
			t.Errorf("lists of %d: %d worst intervals, want one per lane and key: %d", n, got, 2*len(cfg.Algorithms))
		}
		for _, st := range rep.Algos {
			if len(st.MostRejected) != 1 || st.MostRejected[0].Key != "u1" {
				t.Errorf("lists of %d: %s most rejected %+v, want u1 alone", n, st.Name, st.MostRejected)
			}
		}
	}
}
