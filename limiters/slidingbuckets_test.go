package limiters

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestSlidingBucketsExample replays the example trace of its walk-through,
// with the state texts.
func TestSlidingBucketsExample(t *testing.T) {
	tab, err := NewTable(SlidingBuckets, Policy{Limit: 3, Window: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		t     int64 // ms
		allow bool
		state string
	}{
		{20000, true, "span [11,21) count 1"},
		{21000, true, "span [12,22) count 2"},
		{22000, true, "span [13,23) count 3"},
		{23000, false, "span [14,24) count 3"},
		{30000, true, "span [21,31) count 3"},
		{30500, false, "span [21,31) count 3"},
		{31000, true, "span [22,32) count 3"},
	} {
		d, text := tab.AllowExplain(0, s.t*int64(time.Millisecond), 1, time.Second, nil)
		if d.Allowed != s.allow || string(text) != s.state {
			t.Errorf("at %dms: allowed %v %q, want %v %q", s.t, d.Allowed, text, s.allow, s.state)
		}
	}
	// The sliding log refuses the request at 30: the one at 20 is exactly
	// a window before.
	log, _ := NewTable(SlidingLog, Policy{Limit: 3, Window: 10 * time.Second})
	for _, ts := range []int64{20, 21, 22} {
		log.Allow(0, ts*sec, 1)
	}
	if log.Allow(0, 30*sec, 1).Allowed {
		t.Error("sliding log allowed the request at 30")
	}
}

// TestSlidingBucketsOneIsFixedWindow checks that one bucket decides as the
// fixed window, field for field but the name of the refusal.
func TestSlidingBucketsOneIsFixedWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for trial := range 300 {
		tick := ticks[trial%len(ticks)]
		p := randomPolicy(rng, tick)
		p.Buckets = 1
		trace := randomTrace(rng, 80, tick, 4, true)
		fw, sb := newModel(t, FixedWindow, p), newModel(t, SlidingBuckets, p)
		for i, rq := range trace {
			want, got := fw.step(rq.t, rq.cost), sb.step(rq.t, rq.cost)
			if want.Reason == ReasonWindow {
				want.Reason = ReasonBuckets
			}
			if got != want {
				t.Fatalf("%+v: request %d (t=%d cost %d): %+v, fixed window %+v", p, i, rq.t, rq.cost, got, want)
			}
		}
	}
}

// TestSlidingBucketsReference checks decisions against a plain reference:
// the counts of every sub-window, summed over the span for each request.
func TestSlidingBucketsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for trial := range 400 {
		tick := ticks[trial%len(ticks)]
		p := randomPolicy(rng, tick)
		trace := randomTrace(rng, 100, tick, 4, true)
		m := newModel(t, SlidingBuckets, p)
		n := p.Buckets
		sub := int64(p.Window) / n
		counts := map[int64]int64{}
		newest, seen := int64(0), false
		for i, rq := range trace {
			k := floorDiv(rq.t, sub)
			wantAllow := false
			switch {
			case rq.cost > p.Limit:
			case seen && k < newest && p.Clock == ClockReject:
			default:
				if seen && k < newest {
					k = newest // clamped
				}
				var sum int64
				for j := k - n + 1; j <= k; j++ {
					sum += counts[j]
				}
				if sum+rq.cost <= p.Limit {
					wantAllow = true
					counts[k] += rq.cost
					newest, seen = k, true
				}
			}
			if d := m.step(rq.t, rq.cost); d.Allowed != wantAllow {
				t.Fatalf("%+v: request %d (t=%d cost %d): allowed %v, reference %v (%+v)", p, i, rq.t, rq.cost, d.Allowed, wantAllow, d)
			}
		}
	}
}

// floorDiv is t/w rounded down.
func floorDiv(t, w int64) int64 {
	q := t / w
	if t%w != 0 && t < 0 {
		q--
	}
	return q
}

// TestSlidingBucketsSpanBound checks the algorithm's promise: never more
// than the limit in any Buckets consecutive sub-windows, counting each
// allowed request where it was taken (DecidedAt), and never more in a
// closed interval than MaxInInterval says.
func TestSlidingBucketsSpanBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for trial := range 300 {
		tick := ticks[trial%len(ticks)]
		p := randomPolicy(rng, tick)
		trace := randomTrace(rng, 150, tick, 3, true)
		tab, err := NewTable(SlidingBuckets, p)
		if err != nil {
			t.Fatal(err)
		}
		sub := int64(p.Window) / p.Buckets
		type taken struct{ at, cost int64 }
		var allowed []taken
		for _, rq := range trace {
			if tab.Allow(0, rq.t, rq.cost).Allowed {
				allowed = append(allowed, taken{tab.DecidedAt(0, rq.t), rq.cost})
			}
		}
		for _, a := range allowed {
			first := floorDiv(a.at, sub)
			var sum int64
			for _, b := range allowed {
				if k := floorDiv(b.at, sub); k >= first && k < first+p.Buckets {
					sum += b.cost
				}
			}
			if sum > p.Limit {
				t.Fatalf("%+v: %d in the %d sub-windows from %d", p, sum, p.Buckets, first)
			}
			for _, interval := range []int64{0, sub - 1, int64(p.Window), 3*int64(p.Window) + 1} {
				var in int64
				for _, b := range allowed {
					if b.at >= a.at && b.at-a.at <= interval {
						in += b.cost
					}
				}
				if bound := SlidingBuckets.MaxInInterval(p, time.Duration(interval)); in > bound {
					t.Fatalf("%+v: %d in [%d, +%d], bound %d", p, in, a.at, interval, bound)
				}
			}
		}
	}
}

func TestSlidingBucketsPolicy(t *testing.T) {
	_, err := NewTable(SlidingBuckets, Policy{Limit: 3, Window: 10, Buckets: 3})
	if err == nil || !strings.Contains(err.Error(), "window 10ns does not divide into 3 buckets") {
		t.Errorf("window 10ns in 3 buckets: %v", err)
	}
	if _, err := NewTable(SlidingBuckets, Policy{Limit: 3, Window: 10, Buckets: -1}); err == nil || !strings.Contains(err.Error(), "buckets must be positive") {
		t.Errorf("buckets -1: %v", err)
	}
	tab, err := NewTable(SlidingBuckets, Policy{Limit: 3, Window: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if d := tab.Allow(0, 5*sec+int64(time.Second)/2, 1); d.ResetAfter != 9500*time.Millisecond {
		t.Errorf("default buckets: reset %v, want 9.5s (10 buckets of 1s)", d.ResetAfter)
	}
}

// FuzzSlidingBuckets checks exact retry, reset and remaining, one bucket
// against the fixed window, and no panics with the fuzzer's own numbers.
func FuzzSlidingBuckets(f *testing.F) {
	seedCorpus(f, []int8{1, 1, 1, 1, 7, -7})
	seedCorpus(f, []int8{7, 1, 1, 1, 1, 1, -3, 9})
	f.Fuzz(func(t *testing.T, limit, window, n, per int64, clock uint8, base int64, data []byte) {
		p, trace := fuzzInput(limit, window, n, per, clock, base, data)
		checkExact(t, SlidingBuckets, p, trace)
		p.Buckets = 1
		fw, sb := run(t, FixedWindow, p, trace), run(t, SlidingBuckets, p, trace)
		for i := range fw {
			if fw[i].Reason == ReasonWindow {
				fw[i].Reason = ReasonBuckets
			}
			if sb[i] != fw[i] {
				t.Fatalf("%+v: request %d: one bucket %+v, fixed window %+v", p, i, sb[i], fw[i])
			}
		}
		rawPass(t, SlidingBuckets, limit, window, n, per, base, data)
	})
}
