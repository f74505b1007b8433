package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// TestPeek: for every algorithm, a peek before each request of a random
// trace (steps back in time and the clamping clock rule included) says
// what a request of cost 1 would get, takes nothing, and writes nothing:
// the requests still get exactly limiters.Keyed's decisions.
func TestPeek(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	for _, a := range keptAlgorithms() {
		for _, clock := range []limiters.Clock{limiters.ClockReject, limiters.ClockClamp} {
			p := policyFor(a)
			p.Clock = clock
			st := newStore(t, c, a, p, Options{ExpiryMargin: replayMargin})
			k, _ := limiters.NewKeyed(a, p)
			reqs := makeTrace(traceSpec{seed: uint64(a) + 11, requests: 300, keys: 3, span: 20 * time.Second, maxCost: 3, jitter: 5 * time.Millisecond})
			for i, q := range reqs {
				peek, err := st.Peek(ctx, q.key, q.now)
				if err != nil {
					t.Fatal(err)
				}
				again, _ := st.Peek(ctx, q.key, q.now)
				if again != peek {
					t.Fatalf("%v: request %d: a second peek %+v, the first %+v", a, i, again, peek)
				}
				// The request of cost 1 the peek foretold.
				d, err := st.Allow(ctx, q.key, q.now, 1)
				if want := k.Allow(q.key, q.now, 1); err != nil || d != want {
					t.Fatalf("%v: request %d: got %+v %v want %+v", a, i, d, err, want)
				}
				rem := d.Remaining
				if d.Allowed {
					rem++
				}
				if peek.Allowed != d.Allowed || peek.Reason != d.Reason || peek.RetryAfter != d.RetryAfter || peek.Delay != d.Delay || peek.Remaining != rem {
					t.Fatalf("%v, clock %v: request %d (%s at %d): peek %+v, then the request %+v", a, clock, i, q.key, q.now, peek, d)
				}
			}
		}
	}
}

// TestAllowAtMost: for every algorithm, a request for up to n takes what
// remains, up to n, when at least 1 does (the decision is then
// limiters.Keyed's for that cost), and otherwise is judged as a request
// of cost 1.
func TestAllowAtMost(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	for _, a := range keptAlgorithms() {
		p := policyFor(a)
		st := newStore(t, c, a, p, Options{ExpiryMargin: replayMargin})
		k, _ := limiters.NewKeyed(a, p)
		reqs := makeTrace(traceSpec{seed: uint64(a) + 21, requests: 500, keys: 3, span: 20 * time.Second, maxCost: 12, jitter: 5 * time.Millisecond})
		partial := 0
		for i, q := range reqs {
			most := max(q.cost, 1)
			peek, err := st.Peek(ctx, q.key, q.now)
			if err != nil {
				t.Fatal(err)
			}
			granted, d, err := st.AllowAtMost(ctx, q.key, q.now, most)
			if err != nil {
				t.Fatal(err)
			}
			cost := int64(1)
			if peek.Allowed {
				cost = min(most, peek.Remaining)
				if granted != cost {
					t.Fatalf("%v: request %d: granted %d of %d, with %d remaining", a, i, granted, most, peek.Remaining)
				}
				if cost < most {
					partial++
				}
			} else if granted != 0 {
				t.Fatalf("%v: request %d: granted %d when a request of 1 would be refused", a, i, granted)
			}
			if want := k.Allow(q.key, q.now, cost); d != want {
				t.Fatalf("%v: request %d for up to %d: got %+v want Keyed's for %d, %+v", a, i, most, d, cost, want)
			}
		}
		if partial == 0 {
			t.Errorf("%v: no partial grant", a)
		}
	}
}

// TestReset: Reset puts a key back in its fresh state under every
// limiter, and leaves the other keys as they were.
func TestReset(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	ls := everyLimiter()
	st, err := New(c, ls, Options{Prefix: testPrefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]limiters.Decision, len(ls))
	for range 20 {
		for _, key := range []string{"a", "b"} {
			if err := st.AllowAll(ctx, key, 1e9, 1, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.Reset(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Exists(ctx, st.Keys("a")...).Result(); n != 0 {
		t.Errorf("%d of a's states left after Reset", n)
	}
	if n, _ := c.Exists(ctx, st.Keys("b")...).Result(); n != int64(len(ls)) {
		t.Errorf("%d of b's %d states left after Reset of a", n, len(ls))
	}
	if err := st.AllowAll(ctx, "a", 1e9, 1, out); err != nil {
		t.Fatal(err)
	}
	for i, l := range ls {
		k, _ := limiters.NewKeyed(l.Algorithm, l.Policy)
		if want := k.Allow("a", 1e9, 1); out[i] != want {
			t.Errorf("%s after Reset: %+v, want a fresh key's %+v", l.Name, out[i], want)
		}
	}
}
