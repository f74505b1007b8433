package redisstore

import (
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// policyFor returns a policy for a under which a key sending a request
// every few tens of ms is limited some of the time.
func policyFor(a limiters.Algorithm) limiters.Policy {
	if a.Windowed() {
		return limiters.Policy{Limit: 8, Window: time.Second}
	}
	return limiters.Policy{Capacity: 8, Rate: limiters.Rate{N: 7, Per: 2 * time.Second}}
}

// TestEqualsKeyed: for every algorithm, a random trace over many keys,
// with random costs and steps back in time, gets from the store exactly
// the decisions limiters.Keyed makes, field by field.
func TestEqualsKeyed(t *testing.T) {
	c := testClient(t)
	const epoch = 1_700_000_000_123_456_789
	for _, a := range limiters.AllAlgorithms() {
		if _, ok := kinds[a]; !ok {
			continue // not kept in Redis yet
		}
		t.Run(a.String(), func(t *testing.T) {
			p := policyFor(a)
			st, err := New(c, []Limiter{{Name: "lim", Algorithm: a, Policy: p}}, Options{Prefix: testPrefix(t), Epoch: epoch, ExpiryMargin: replayMargin})
			if err != nil {
				t.Fatal(err)
			}
			reqs := makeTrace(traceSpec{
				seed: uint64(a) + 1, requests: traceRequests, keys: traceKeys,
				// From before the epoch to after it: negative times too.
				base: epoch - int64(50*time.Second), span: time.Duration(traceRequests/traceKeys) * 150 * time.Millisecond,
				maxCost: 4, jitter: 3 * time.Millisecond,
			})
			compareKeyed(t, st, a, p, reqs, 500)
		})
	}
}

// TestEqualsKeyedPolicies: the same with other policies: fractional
// rates, costs near the limit, sub-windows, the clamping clock rule, and
// an epoch that is no multiple of the window.
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
		{Limit: 3, Window: 700 * time.Millisecond, Buckets: 7, Capacity: 3, Rate: rate("0.7/300ms")},
		{Limit: 40, Window: 2500 * time.Millisecond, Buckets: 5, Capacity: 40, Rate: rate("13/7s")},
		{Limit: 5, Window: time.Second / 3, Buckets: 1, Capacity: 5, Rate: rate("1/3ms"), Clock: limiters.ClockClamp},
		{Limit: 12, Window: 1234567891, Buckets: 11, Capacity: 12, Rate: rate("2.5"), Clock: limiters.ClockClamp},
		{Limit: 2, Window: 10 * time.Millisecond, Buckets: 2, Capacity: 2, Rate: rate("1/5ms")},
	}
	const epoch = -987_654_321_987
	for _, a := range limiters.AllAlgorithms() {
		if _, ok := kinds[a]; !ok {
			continue // not kept in Redis yet
		}
		for i, p := range policies {
			if a == limiters.SlidingBuckets && int64(p.Window)%p.Buckets != 0 {
				p.Buckets = 1
			}
			t.Run(a.String()+"/"+string(rune('a'+i)), func(t *testing.T) {
				st, err := New(c, []Limiter{{Name: "lim", Algorithm: a, Policy: p}}, Options{Prefix: testPrefix(t), Epoch: epoch, ExpiryMargin: replayMargin})
				if err != nil {
					t.Fatal(err)
				}
				n := traceRequests / 20
				reqs := makeTrace(traceSpec{
					seed: uint64(a)*10 + uint64(i), requests: n, keys: 50,
					base: epoch - int64(5*time.Second), span: time.Duration(n/50) * p.Window / time.Duration(p.Limit) * 2,
					maxCost: p.Limit, jitter: 3 * time.Millisecond,
				})
				compareKeyed(t, st, a, p, reqs, 300)
			})
		}
	}
}
