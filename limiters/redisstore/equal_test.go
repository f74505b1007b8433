package redisstore

import (
	"math"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// policyFor returns a policy for a under which a key sending a request
// every few tens of ms is limited some of the time.
func policyFor(a limiters.Algorithm) limiters.Policy {
	if a == limiters.BlockingCounter {
		return limiters.Policy{Limit: 8, Window: time.Second, Block: 1500 * time.Millisecond}
	}
	if a.Windowed() {
		return limiters.Policy{Limit: 8, Window: time.Second}
	}
	return limiters.Policy{Capacity: 8, Rate: limiters.Rate{N: 7, Per: 2 * time.Second}}
}

// TestEqualsKeyed: for every algorithm of package limiters, a random
// trace over many keys, with random costs and steps back in time, gets
// from the store exactly the decisions limiters.Keyed makes, field by
// field.
func TestEqualsKeyed(t *testing.T) {
	c := testClient(t)
	const base = 1_700_000_000_123_456_789
	for _, a := range keptAlgorithms() {
		t.Run(a.String(), func(t *testing.T) {
			p := policyFor(a)
			st, err := New(c, []Limiter{{Name: "lim", Algorithm: a, Policy: p}}, Options{Prefix: testPrefix(t), ExpiryMargin: replayMargin})
			if err != nil {
				t.Fatal(err)
			}
			reqs := makeTrace(traceSpec{
				seed: uint64(a) + 1, requests: traceRequests, keys: traceKeys,
				base: base - int64(50*time.Second), span: time.Duration(traceRequests/traceKeys) * 150 * time.Millisecond,
				maxCost: 4, jitter: 3 * time.Millisecond,
			})
			compareKeyed(t, st, a, p, reqs, 500)
		})
	}
}

// TestEqualsKeyedPolicies: the same with other policies: fractional
// rates, costs near the limit, sub-windows, the clamping clock rule, and
// times on either side of 0 that are no multiple of the window.
func TestEqualsKeyedPolicies(t *testing.T) {
	c := testClient(t)
	rate := func(s string) limiters.Rate {
		r, err := limiters.ParseRate(s, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	policies := []limiters.Policy{
		{Limit: 3, Window: 700 * time.Millisecond, Buckets: 7, Capacity: 3, Rate: rate("0.7/300ms"), Block: 2 * time.Second},
		{Limit: 40, Window: 2500 * time.Millisecond, Buckets: 5, Capacity: 40, Rate: rate("13/7s"), Block: 1},
		{Limit: 5, Window: time.Second / 3, Buckets: 1, Capacity: 5, Rate: rate("1/3ms"), Clock: limiters.ClockClamp, Block: 999_999_999},
		{Limit: 12, Window: 1234567891, Buckets: 11, Capacity: 12, Rate: rate("2.5"), Clock: limiters.ClockClamp, Block: 1234567891},
		{Limit: 2, Window: 10 * time.Millisecond, Buckets: 2, Capacity: 2, Rate: rate("1/5ms"), Tick: 3 * time.Millisecond, Parts: 7, Delay: 1},
	}
	const base = -987_654_321_987
	for _, a := range keptAlgorithms() {
		for i, p := range policies {
			if a == limiters.SlidingBuckets && int64(p.Window)%p.Buckets != 0 {
				p.Buckets = 1
			}
			t.Run(a.String()+"/"+string(rune('a'+i)), func(t *testing.T) {
				st, err := New(c, []Limiter{{Name: "lim", Algorithm: a, Policy: p}}, Options{Prefix: testPrefix(t), ExpiryMargin: replayMargin})
				if err != nil {
					t.Fatal(err)
				}
				n := traceRequests / 20
				limit := p.Limit
				if !a.Windowed() {
					limit = p.Capacity
				}
				reqs := makeTrace(traceSpec{
					seed: uint64(a)*10 + uint64(i), requests: n, keys: 50,
					base: base - int64(5*time.Second), span: time.Duration(n/50) * p.Window / time.Duration(p.Limit) * 2,
					maxCost: limit, jitter: 3 * time.Millisecond,
				})
				compareKeyed(t, st, a, p, reqs, 300)
			})
		}
	}
}

// TestEqualsKeyedLongWindows: windows of a month and of a year, a
// sliding counter of 100 a day and of 10,000 an hour, buckets that take
// weeks to drain, and traces that run for years and end near the ends
// of the int64 range: the store counts time in full, from no epoch, and
// decides as limiters.Keyed does.
func TestEqualsKeyedLongWindows(t *testing.T) {
	c := testClient(t)
	const day = 24 * time.Hour
	slow := limiters.Rate{N: 100, Per: 30 * day}
	tests := []struct {
		name  string
		p     limiters.Policy
		base  int64
		algos []limiters.Algorithm
	}{
		{"month", limiters.Policy{Limit: 50, Window: 30 * day, Capacity: 50, Rate: slow, Block: 45 * day}, 1_700_000_000e9, nil},
		{"year", limiters.Policy{Limit: 40, Window: 365 * day, Capacity: 40, Rate: slow, Buckets: 12, Tick: time.Second}, -3e17, nil},
		{"100/day", limiters.Policy{Limit: 100, Window: day}, 1e18, []limiters.Algorithm{limiters.SlidingCounter, limiters.FixedWindow}},
		{"10000/hour", limiters.Policy{Limit: 10000, Window: time.Hour}, 5e17, []limiters.Algorithm{limiters.SlidingCounter, limiters.SlidingLog}},
		{"near MinInt64", limiters.Policy{Limit: 6, Window: 50 * day, Capacity: 6, Rate: slow, Buckets: 5, Tick: time.Second, Block: 20 * day}, math.MinInt64 + int64(time.Hour), nil},
		{"near MaxInt64", limiters.Policy{Limit: 6, Window: 50 * day, Capacity: 6, Rate: slow, Buckets: 5, Tick: time.Second, Block: math.MaxInt64}, math.MaxInt64 - int64(4*365*day), nil},
	}
	for _, tt := range tests {
		algos := tt.algos
		if algos == nil {
			algos = keptAlgorithms()
		}
		for _, a := range algos {
			t.Run(tt.name+"/"+a.String(), func(t *testing.T) {
				p := tt.p
				if a == limiters.TickQueue {
					p.Rate = limiters.Rate{N: 1, Per: time.Hour} // a queue of 50 drains in two days
				}
				st, err := New(c, []Limiter{{Name: "lim", Algorithm: a, Policy: p}}, Options{Prefix: testPrefix(t), ExpiryMargin: replayMargin})
				if err != nil {
					t.Fatal(err)
				}
				limit := p.Limit
				if !a.Windowed() {
					limit = p.Capacity
				}
				// Costs up to a tenth of the limit: a key reaches it in a
				// hundred requests or so.
				n := max(traceRequests/40, 2000)
				span := 3 * p.Window
				if p.Window == 0 {
					span = 3 * 30 * day
				}
				reqs := makeTrace(traceSpec{
					seed: uint64(a) + 77, requests: n, keys: 4, base: tt.base, span: span,
					maxCost: max(1, limit/10), jitter: day,
				})
				compareKeyed(t, st, a, p, reqs, 200)
			})
		}
	}
}
