package redisstore

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

func newStore(t *testing.T, c interface{}, a limiters.Algorithm, p limiters.Policy, opts Options) *Store {
	t.Helper()
	if opts.Prefix == "" {
		opts.Prefix = testPrefix(t)
	}
	st, err := New(clientOf(c), []Limiter{{Name: "lim", Algorithm: a, Policy: p}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestNoScriptRecovery: SCRIPT FLUSH in the middle of a replay, twice,
// changes no decision: batches and single requests load the scripts
// again after NOSCRIPT.
func TestNoScriptRecovery(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	for _, a := range []limiters.Algorithm{limiters.SlidingLog, limiters.TokenBucket, limiters.SlidingBuckets} {
		p := policyFor(a)
		st := newStore(t, c, a, p, Options{ExpiryMargin: replayMargin})
		k, _ := limiters.NewKeyed(a, p)
		reqs := makeTrace(traceSpec{seed: 7, requests: 6000, keys: 30, span: 30 * time.Second, maxCost: 3, jitter: time.Millisecond})
		out := make([]limiters.Decision, 100)
		for start := 0; start < len(reqs); start += 100 {
			if start%2000 == 1000 {
				if err := c.ScriptFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			var batch []Request
			for _, q := range reqs[start : start+100] {
				batch = append(batch, Request{Key: q.key, Now: q.now, Cost: q.cost})
			}
			if start%1000 == 0 {
				// One request alone, right after the flush.
				q := reqs[start]
				got, err := st.Allow(ctx, q.key, q.now, q.cost)
				if err != nil {
					t.Fatal(err)
				}
				if want := k.Allow(q.key, q.now, q.cost); got != want {
					t.Fatalf("%v: request %d: got %+v want %+v", a, start, got, want)
				}
				batch = batch[1:]
			}
			if err := st.AllowBatch(ctx, batch, out); err != nil {
				t.Fatal(err)
			}
			for i, r := range batch {
				if want := k.Allow(r.Key, r.Now, r.Cost); out[i] != want {
					t.Fatalf("%v: request %d: got %+v want %+v", a, start+i, out[i], want)
				}
			}
		}
	}
}

// TestTTLIsFreshTime: after each write, every key of the state expires
// when the state is fresh again: ResetAfter, rounded up to a millisecond.
func TestTTLIsFreshTime(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	for _, a := range limiters.AllAlgorithms() {
		if _, ok := kinds[a]; !ok {
			continue // not kept in Redis yet
		}
		p := policyFor(a)
		p.Window, p.Rate = 30*time.Second, limiters.Rate{N: 1, Per: 7 * time.Second / 3}
		st := newStore(t, c, a, p, Options{})
		keys := st.lims[0].keyNames(st.opts.Prefix, "u")
		now := int64(1_234_567_891)
		for i, cost := range []int64{1, 2, 1} {
			now += int64(i) * 333_333_333
			d, err := st.Allow(ctx, "u", now, cost)
			if err != nil || !d.Allowed {
				t.Fatalf("%v: %+v %v", a, d, err)
			}
			want := (d.ResetAfter + time.Millisecond - 1) / time.Millisecond
			for _, key := range keys {
				ttl, err := c.PTTL(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				// PTTL counts down from the write; allow for the round trip.
				if got := ttl / time.Millisecond; got > want || got < want-100 {
					t.Errorf("%v: %s: PTTL %dms after a decision with ResetAfter %v: want %dms", a, key, got, d.ResetAfter, want)
				}
			}
		}
		// A state fresh again decides as a fresh state, so the key's
		// expiry (here simulated: deleted) changes nothing.
		later := now + int64(time.Minute)
		d1, _ := st.Allow(ctx, "u", later, 1)
		c.Del(ctx, keys...)
		d2, _ := newStore(t, c, a, p, Options{}).Allow(ctx, "v", later, 1)
		if d1 != d2 {
			t.Errorf("%v: at its fresh time the state decides %+v, a fresh one %+v", a, d1, d2)
		}
	}
}

// TestTTLExpiresWhenFresh: under ServerClock, a key is gone from Redis
// once ResetAfter has passed, and still there just before.
func TestTTLExpiresWhenFresh(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	tm, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	st := newStore(t, c, limiters.TokenBucket, limiters.Policy{Capacity: 2, Rate: limiters.Rate{N: 1, Per: 100 * time.Millisecond}},
		Options{Clock: ServerClock, Epoch: tm.UnixNano()})
	d, err := st.Allow(ctx, "u", 0, 2)
	if err != nil || !d.Allowed || d.ResetAfter > 200*time.Millisecond || d.ResetAfter < 190*time.Millisecond {
		t.Fatalf("%+v %v", d, err)
	}
	key := st.lims[0].keyNames(st.opts.Prefix, "u")[0]
	time.Sleep(d.ResetAfter - 60*time.Millisecond)
	if n, _ := c.Exists(ctx, key).Result(); n != 1 {
		t.Errorf("key gone before the bucket was full again")
	}
	time.Sleep(80 * time.Millisecond)
	if n, _ := c.Exists(ctx, key).Result(); n != 0 {
		t.Errorf("key still there after the bucket was full again")
	}
}

// TestSortedSetMembersUnique: requests at one instant are separate
// members of the sliding log's sorted set, with the same score.
func TestSortedSetMembersUnique(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	st := newStore(t, c, limiters.SlidingLog, limiters.Policy{Limit: 10, Window: time.Minute}, Options{})
	for _, cost := range []int64{1, 1, 2, 1} {
		if d, err := st.Allow(ctx, "u", 5e9, cost); err != nil || !d.Allowed {
			t.Fatalf("%+v %v", d, err)
		}
	}
	keys := st.lims[0].keyNames(st.opts.Prefix, "u")
	zs, err := c.ZRangeWithScores(ctx, keys[0], 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, z := range zs {
		m := z.Member.(string)
		if seen[m] || z.Score != 5e9 {
			t.Errorf("member %q score %v", m, z.Score)
		}
		seen[m] = true
	}
	if len(zs) != 4 {
		t.Errorf("%d members, want 4: %v", len(zs), zs)
	}
	if sum, _ := c.HGet(ctx, keys[1], "s").Result(); sum != "5" {
		t.Errorf("sum %q, want 5", sum)
	}
	d, _ := st.Allow(ctx, "u", 5e9, 6)
	if d.Allowed || d.Remaining != 5 {
		t.Errorf("%+v", d)
	}
}

// TestRefusesInexactPolicies: a policy whose arithmetic could pass 2^53
// is refused when the store is made, naming the parameter; a time too far
// from the epoch is refused per request.
func TestRefusesInexactPolicies(t *testing.T) {
	c := NewClient([]string{"127.0.0.1:1"}, time.Second) // never contacted
	defer c.Close()
	rate := func(n int64, per time.Duration) limiters.Rate { return limiters.Rate{N: n, Per: per} }
	tests := []struct {
		a     limiters.Algorithm
		p     limiters.Policy
		param string
	}{
		{limiters.FixedWindow, limiters.Policy{Limit: 1 << 53, Window: time.Second}, "--limit"},
		{limiters.SlidingLog, limiters.Policy{Limit: 5, Window: 1 << 51}, "--window"},
		{limiters.SlidingBuckets, limiters.Policy{Limit: 5, Window: 30 * 24 * time.Hour}, "--window"},
		{limiters.SlidingCounter, limiters.Policy{Limit: 100_000, Window: time.Hour}, "--limit"},
		{limiters.TokenBucket, limiters.Policy{Capacity: 1_000_000, Rate: rate(1, 10*time.Second)}, "--capacity"},
		{limiters.GCRA, limiters.Policy{Capacity: 1, Rate: rate(1, 1<<53)}, "--rate"},
		{limiters.LeakyQueue, limiters.Policy{Capacity: 1, Rate: rate(1<<53, 3)}, "--rate"},
		{limiters.LeakyBucket, limiters.Policy{Capacity: 1 << 40, Rate: rate(7, 3<<20)}, "--capacity"},
	}
	for _, tt := range tests {
		_, err := New(c, []Limiter{{Name: "x", Algorithm: tt.a, Policy: tt.p}}, Options{})
		if err == nil || !strings.HasPrefix(err.Error(), "redisstore: "+tt.param+":") || !strings.Contains(err.Error(), "exceeds 2^53 in exact arithmetic") {
			t.Errorf("%v %+v: %v, want an error naming %s", tt.a, tt.p, err, tt.param)
		}
	}
	// Just inside: accepted.
	for _, p := range []limiters.Policy{
		{Limit: 1<<53 - 1, Window: 1<<51 - 1},
		{Capacity: 1<<53 - 2, Rate: rate(1, 1)},
	} {
		a := limiters.FixedWindow
		if p.Capacity > 0 {
			a = limiters.TokenBucket
		}
		if _, err := New(c, []Limiter{{Name: "x", Algorithm: a, Policy: p}}, Options{}); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	st := newStore(t, c, limiters.FixedWindow, policyFor(limiters.FixedWindow), Options{Epoch: 100})
	for _, now := range []int64{100 + 1<<52, 100 - 1<<52, -1 << 63, 1<<63 - 1} {
		if _, err := st.Allow(context.Background(), "u", now, 1); !errors.Is(err, ErrTimeRange) {
			t.Errorf("Allow at %d: %v, want ErrTimeRange", now, err)
		}
	}
}

// TestUnreachable: Connect fails within its timeout, naming the address,
// both when nothing listens and when the server never answers.
func TestUnreachable(t *testing.T) {
	serverAddrs(t, "RATESIM_REDIS_ADDR")
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	for _, addr := range []string{"127.0.0.1:1", silent.Addr().String()} {
		start := time.Now()
		_, err := Connect(context.Background(), []string{addr}, 500*time.Millisecond)
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: Connect took %v", addr, took)
		}
		if err == nil || !strings.Contains(err.Error(), addr) {
			t.Errorf("%s: %v, want an error naming the address", addr, err)
		}
	}
}

// TestFailurePolicy: with the server unreachable or stopped, FailOpen
// allows, FailClosed refuses, both count, and FailError returns the
// error.
func TestFailurePolicy(t *testing.T) {
	addr, stop := scratchServer(t)
	ctx := context.Background()
	p := policyFor(limiters.GCRA)
	up := connect(t, []string{addr})
	down := NewClient([]string{"127.0.0.1:1"}, 200*time.Millisecond)
	defer down.Close()
	var seen []error
	for _, c := range []interface{}{down, up} {
		open := newStore(t, c, limiters.GCRA, p, Options{Failure: FailOpen, OnFailure: func(err error) { seen = append(seen, err) }})
		closed := newStore(t, c, limiters.GCRA, p, Options{Failure: FailClosed})
		fail := newStore(t, c, limiters.GCRA, p, Options{})
		if c == up {
			for _, st := range []*Store{open, closed, fail} {
				if d, err := st.Allow(ctx, "u", 0, 1); err != nil || !d.Allowed {
					t.Fatalf("server up: %+v %v", d, err)
				}
			}
			stop()
		}
		for i := 0; i < 3; i++ {
			if d, err := open.Allow(ctx, "u", 1, 1); err != nil || d != (limiters.Decision{Allowed: true}) {
				t.Errorf("FailOpen: %+v %v", d, err)
			}
			if d, err := closed.Allow(ctx, "u", 1, 1); err != nil || d != (limiters.Decision{Reason: ReasonUnavailable}) {
				t.Errorf("FailClosed: %+v %v", d, err)
			}
			if _, err := fail.Allow(ctx, "u", 1, 1); err == nil {
				t.Error("FailError: no error")
			}
		}
		out := make([]limiters.Decision, 4)
		if err := closed.AllowBatch(ctx, []Request{{Key: "a", Cost: 1}, {Key: "b", Cost: 1}, {Key: "c", Cost: 0}, {Key: "d", Cost: 1}}, out); err != nil {
			t.Error(err)
		}
		if out[2].Reason != limiters.ReasonBadCost || out[3].Reason != ReasonUnavailable {
			t.Errorf("batch: %+v", out)
		}
		if n := open.FailureDecisions(); n != 3 {
			t.Errorf("FailOpen counted %d, want 3", n)
		}
		if n := closed.FailureDecisions(); n != 6 {
			t.Errorf("FailClosed counted %d, want 6", n)
		}
		if n := fail.FailureDecisions(); n != 0 {
			t.Errorf("FailError counted %d, want 0", n)
		}
	}
	if len(seen) != 6 {
		t.Errorf("OnFailure saw %d errors, want 6", len(seen))
	}
}

// TestOutOfMemory: a server past maxmemory refuses the scripts' writes;
// the failure policy decides, nothing is half written, and once memory
// is back the decisions go on as if the failed request never came.
func TestOutOfMemory(t *testing.T) {
	addr, _ := scratchServer(t) // its own server: maxmemory is global
	c := connect(t, []string{addr})
	ctx := context.Background()
	for _, a := range limiters.AllAlgorithms() {
		if _, ok := kinds[a]; !ok {
			continue // not kept in Redis yet
		}
		p := policyFor(a)
		closed := newStore(t, c, a, p, Options{Failure: FailClosed})
		fail := newStore(t, c, a, p, Options{Prefix: closed.opts.Prefix})
		k, _ := limiters.NewKeyed(a, p)
		step := func(now, cost int64) {
			t.Helper()
			got, err := fail.Allow(ctx, "u", now, cost)
			if want := k.Allow("u", now, cost); err != nil || got != want {
				t.Fatalf("%v: got %+v %v want %+v", a, got, err, want)
			}
		}
		step(0, 1)
		if err := c.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
			t.Fatal(err)
		}
		_, err := fail.Allow(ctx, "u", 1e6, 2)
		if err == nil || !strings.Contains(err.Error(), "OOM") {
			t.Errorf("%v: FailError: %v, want an OOM error", a, err)
		}
		if d, err := closed.Allow(ctx, "u", 2e6, 1); err != nil || d.Reason != ReasonUnavailable || closed.FailureDecisions() != 1 {
			t.Errorf("%v: FailClosed: %+v %v, %d failures", a, d, err, closed.FailureDecisions())
		}
		if err := c.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
			t.Fatal(err)
		}
		step(3e6, 1)
		step(3e6, 3)
	}
}

// TestServerClock: under ServerClock the server's time decides: a burst
// is cut at the capacity whatever times the callers pass, and an epoch
// more than 2^52 ns away is refused.
func TestServerClock(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	tm, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	p := limiters.Policy{Capacity: 3, Rate: limiters.Rate{N: 1, Per: time.Hour}}
	st := newStore(t, c, limiters.TokenBucket, p, Options{Clock: ServerClock, Epoch: tm.UnixNano()})
	allowed := 0
	for i := 0; i < 10; i++ {
		d, err := st.Allow(ctx, "u", int64(i)*int64(time.Hour), 1) // the times passed are ignored
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			allowed++
		} else if d.RetryAfter <= 0 || d.RetryAfter > time.Hour || d.Reason != limiters.ReasonNoTokens {
			t.Errorf("%+v", d)
		}
	}
	if allowed != 3 {
		t.Errorf("%d allowed, want 3", allowed)
	}
	far := newStore(t, c, limiters.TokenBucket, p, Options{Clock: ServerClock, Epoch: tm.UnixNano() - 1<<52})
	if _, err := far.Allow(ctx, "u", 0, 1); !errors.Is(err, ErrTimeRange) {
		t.Errorf("epoch 2^52 ns ago: %v, want ErrTimeRange", err)
	}
}
