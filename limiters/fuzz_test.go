package limiters

import (
	"math"
	"slices"
	"testing"
	"time"
)

// fuzzInput turns fuzzer bytes into a policy and a trace. Each request
// takes two bytes: a signed time step and a cost (1 to 4).
func fuzzInput(limit, window, n, per int64, clock uint8, base int64, data []byte) (Policy, []request) {
	small := func(v, m int64) int64 {
		if v < 0 {
			v = -(v + 1)
		}
		return 1 + v%m
	}
	p := Policy{
		Limit:    small(limit, 8),
		Window:   time.Duration(small(window, 50)),
		Capacity: small(limit, 8),
		Rate:     Rate{N: small(n, 5), Per: time.Duration(small(per, 40))},
		Clock:    Clock(clock % 2),
	}
	p.Buckets = divisorNear(int64(p.Window), small(per, 6))
	// Keep the trace well inside the int64 range; TestExtremeTimes and the
	// raw pass below cover the ends.
	const room = 1 << 40
	base = min(max(base, math.MinInt64+room), math.MaxInt64-room)
	var trace []request
	ts := base
	for i := 0; i+1 < len(data) && len(trace) < 300; i += 2 {
		ts += int64(int8(data[i]))
		trace = append(trace, request{t: ts, cost: 1 + int64(data[i+1]%4)})
	}
	return p, trace
}

// divisorNear returns the largest divisor of window not above b, or b
// when window is not positive.
func divisorNear(window, b int64) int64 {
	for window > 0 && b > 1 && window%b != 0 {
		b--
	}
	return b
}

// floorTo rounds t down to a multiple of d.
func floorTo(t, d int64) int64 {
	q := t / d
	if t%d < 0 {
		q--
	}
	return q * d
}

// rawPass runs the fuzzer's numbers unchanged, as policy and times, and
// checks only that nothing panics and decisions stay in range.
func rawPass(t *testing.T, alg Algorithm, limit, window, n, per int64, base int64, data []byte) {
	p := Policy{Limit: limit, Window: time.Duration(window), Capacity: limit, Rate: Rate{n, time.Duration(per)}, Buckets: divisorNear(window, 1+n&7)}
	tab, err := NewTable(alg, p)
	if err != nil {
		return
	}
	ts := base
	for i := 0; i+1 < len(data) && i < 200; i += 2 {
		ts += int64(int8(data[i])) << (data[i+1] % 64)
		d, _ := tab.AllowExplain(0, ts, int64(data[i+1])-2, time.Millisecond, nil)
		if d.Remaining < 0 || d.Remaining > limit || d.RetryAfter < 0 || d.ResetAfter < 0 || d.Delay < 0 {
			t.Fatalf("%s %+v at %d: %+v", alg, p, ts, d)
		}
	}
}

func seedCorpus(f *testing.F, steps []int8) {
	var data []byte
	for _, s := range steps {
		data = append(data, byte(s), 0)
	}
	f.Add(int64(3), int64(10), int64(1), int64(5), uint8(0), int64(0), data)
	f.Add(int64(3), int64(10), int64(1), int64(5), uint8(1), int64(-15), data)
	f.Add(int64(2), int64(7), int64(3), int64(2), uint8(0), int64(math.MaxInt64), []byte{5, 1, 0xfb, 2, 3, 3, 9, 0, 0x80, 1})
}

// FuzzFixedWindow checks the fixed window and the sliding counter: exact
// retry, reset and remaining, shift invariance, and no panics.
func FuzzFixedWindow(f *testing.F) {
	seedCorpus(f, []int8{1, 1, 1, 1, 7, -7})        // the seed's fixed window: 1 2 3 4 11 4
	seedCorpus(f, []int8{7, 1, 1, 1, 1, 1})         // the boundary burst: 7 .. 12
	seedCorpus(f, []int8{1, 2, 2, 3, 4, 1, -20, 3}) // the seed's sliding counter, then back
	f.Fuzz(func(t *testing.T, limit, window, n, per int64, clock uint8, base int64, data []byte) {
		p, trace := fuzzInput(limit, window, n, per, clock, base, data)
		for _, alg := range []Algorithm{FixedWindow, SlidingCounter, FixedWindowHits} {
			checkExact(t, alg, p, trace)
			want := run(t, alg, p, trace)
			moved := make([]request, len(trace))
			shift := int64(p.Window) * (int64(int8(clock)) - 3)
			for i, rq := range trace {
				moved[i] = request{t: rq.t + shift, cost: rq.cost}
			}
			got := run(t, alg, p, moved)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s %+v shift %d: request %d: %+v, unshifted %+v", alg, p, shift, i, got[i], want[i])
				}
			}
			rawPass(t, alg, limit, window, n, per, base, data)
		}
	})
}

// FuzzSlidingLog checks that the sliding log never admits more than the
// limit in a closed window, exact retry, reset and remaining, and no panics.
func FuzzSlidingLog(f *testing.F) {
	seedCorpus(f, []int8{1, 2, 2, 3, 4, 1}) // the seed's sliding log: 1 3 5 8 12 13
	f.Fuzz(func(t *testing.T, limit, window, n, per int64, clock uint8, base int64, data []byte) {
		p, trace := fuzzInput(limit, window, n, per, clock, base, data)
		checkExact(t, SlidingLog, p, trace)
		p.Clock = ClockReject
		checkWindowBound(t, p, run(t, SlidingLog, p, trace), trace)
		rawPass(t, SlidingLog, limit, window, n, per, base, data)
	})
}

// FuzzBuckets checks the token bucket, leaky bucket, GCRA and the leaky
// queue: GCRA and the others decide as the token bucket, no bucket admits
// more than capacity + rate*elapsed, exact retry, reset and remaining, and
// no panics.
func FuzzBuckets(f *testing.F) {
	seedCorpus(f, []int8{0, 0, 0, 0, 5, 1}) // the seed's buckets: 0 0 0 0 5 6
	f.Fuzz(func(t *testing.T, limit, window, n, per int64, clock uint8, base int64, data []byte) {
		p, trace := fuzzInput(limit, window, n, per, clock, base, data)
		tb := run(t, TokenBucket, p, trace)
		for _, alg := range []Algorithm{TokenBucket, LeakyBucket, GCRA, LeakyQueue} {
			checkExact(t, alg, p, trace)
			got := run(t, alg, p, trace)
			for i := range got {
				g := got[i]
				g.Delay = 0
				if g.Reason == kinds[alg].refusal {
					g.Reason = ReasonNoTokens
				}
				if g != tb[i] {
					t.Fatalf("%s %+v: request %d: %+v, token-bucket %+v", alg, p, i, got[i], tb[i])
				}
			}
			if p.Clock == ClockReject {
				checkBucketBound(t, alg, p, got, trace)
			}
			rawPass(t, alg, limit, window, n, per, base, data)
		}
		// TickQueue, with the tick, parts and delay the other numbers give.
		// (Masks and unsigned remainders: the raw numbers may be negative.)
		p.Tick = time.Duration(divisorNear(int64(p.Window), 1+n&7))
		p.Parts = []int64{1000, 1, 3, 7}[per&3]
		p.Delay = int64(uint64(limit) % uint64(p.Capacity+1))
		checkExact(t, TickQueue, p, trace)
		if p.Delay >= p.Capacity-1 && p.Clock == ClockReject {
			// The queue sees time in whole ticks: the bound holds between
			// the ticks of the requests, which may lie up to a tick
			// further apart than their times.
			ticked := slices.Clone(trace)
			for i := range ticked {
				ticked[i].t = floorTo(ticked[i].t, int64(p.Tick))
			}
			checkBucketBound(t, TickQueue, p, run(t, TickQueue, p, trace), ticked)
		}
		rawPass(t, TickQueue, limit, window, n, per, base, data)
	})
}

// FuzzParseRate checks that ParseRate never panics, that what it accepts
// is valid, and that Format gives text that parses back to the same rate.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"0.2", "1/5", "3/10s", "300/1m", "2.5/1ms", "1/3", "0", "-1", "NaN", "Inf", "1e400", "1/0", "9/9999999999h"} {
		f.Add(s, int64(time.Second))
	}
	f.Fuzz(func(t *testing.T, s string, unit int64) {
		u := time.Duration(unit)
		r, err := ParseRate(s, u)
		if err != nil {
			return
		}
		if !r.Valid() {
			t.Fatalf("ParseRate(%q) = %v, invalid", s, r)
		}
		back, err := ParseRate(r.Format(u), u)
		if err != nil || back != r {
			t.Fatalf("ParseRate(%q) = %v; Format %q parses as %v, %v", s, r, r.Format(u), back, err)
		}
	})
}

// FuzzGroup checks that a Group of every algorithm decides as that many
// Tables do, through Allow and through Admit (which skips the arithmetic
// of the other fields and so is a second implementation of every rule),
// over traces with costs above the limit and clocks going backwards, with
// the fuzzer's numbers as times, raw, too.
func FuzzGroup(f *testing.F) {
	seedCorpus(f, []int8{1, 1, 1, 1, 7, -7})
	seedCorpus(f, []int8{7, 1, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, limit, window, n, per int64, clock uint8, base int64, data []byte) {
		p, trace := fuzzInput(limit, window, n, per, clock, base, data)
		check := func(p Policy, trace []request) {
			algs := AllAlgorithms()
			allow, err := NewGroup(algs, p)
			if err != nil {
				return
			}
			admit, _ := NewGroup(algs, p)
			tabs := make([]*Table, len(algs))
			for i, a := range algs {
				tabs[i], _ = NewTable(a, p)
			}
			out := make([]Decision, len(algs))
			for step, rq := range trace {
				got := allow.Allow(0, rq.t, rq.cost, out)
				fast := admit.Admit(0, rq.t, rq.cost)
				for i, tab := range tabs {
					want := tab.Allow(0, rq.t, rq.cost)
					if out[i] != want || (got&(1<<i) != 0) != want.Allowed || (fast&(1<<i) != 0) != want.Allowed {
						t.Fatalf("%v %+v step %d (t=%d cost=%d): group %+v (mask %b, admit %b), table %+v", algs[i], p, step, rq.t, rq.cost, out[i], got, fast, want)
					}
				}
			}
		}
		check(p, trace)
		// Raw: the fuzzer's own policy numbers and huge time steps.
		raw := Policy{Limit: limit, Window: time.Duration(window), Capacity: limit, Rate: Rate{n, time.Duration(per)}, Clock: Clock(clock % 2), Buckets: divisorNear(window, 1+n&7)}
		var rawTrace []request
		ts := base
		for i := 0; i+1 < len(data) && i < 200; i += 2 {
			ts += int64(int8(data[i])) << (data[i+1] % 64)
			rawTrace = append(rawTrace, request{t: ts, cost: int64(data[i+1]) - 2})
		}
		check(raw, rawTrace)
	})
}
