package redisstore

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// TestTTLIsFreshTime: after each write, the key's state expires when it
// is fresh again: ResetAfter, rounded up to a millisecond (less the time
// the test took to ask, measured).
func TestTTLIsFreshTime(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	for _, a := range keptAlgorithms() {
		p := policyFor(a)
		p.Window, p.Rate = 30*time.Second, limiters.Rate{N: 1, Per: 7 * time.Second / 3}
		st := newStore(t, c, a, p, Options{})
		keys := st.Keys("u")
		now := int64(1_234_567_891)
		for i, cost := range []int64{1, 2, 1} {
			now += int64(i) * 333_333_333
			began := time.Now()
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
				// PTTL counts down from the write, which came after began.
				took := time.Since(began)/time.Millisecond + 1
				if got := ttl / time.Millisecond; got > want || got < want-took {
					t.Errorf("%v: %s: PTTL %dms after a decision with ResetAfter %v, %dms before: want %dms", a, key, got, d.ResetAfter, took, want)
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

// TestStateIsOneKeyWithOneDeadline: under every algorithm a key's state
// is one Redis key, whose expiry the script sets from the one reading of
// the server's clock that judged the request (PEXPIREAT): exactly the
// decision's time plus ResetAfter, rounded up to a millisecond. (The
// sliding log kept its entries and its total in two keys, each given its
// own PEXPIRE, which read the clock again: on Redis before 7.2 they could
// expire a millisecond apart.)
func TestStateIsOneKeyWithOneDeadline(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	for _, a := range keptAlgorithms() {
		// States that stay for an hour: none expires during the test.
		p := limiters.Policy{Limit: 8, Window: time.Hour, Capacity: 8, Rate: limiters.Rate{N: 1, Per: time.Hour}}
		st := newStore(t, c, a, p, Options{Clock: ServerClock})
		for i := range 5 {
			var out [1]Result
			if err := st.Decide(ctx, []Request{{Key: "u", Cost: 1 + int64(i%2)}}, out[:]); err != nil {
				t.Fatal(err)
			}
			r := out[0]
			keys, err := c.Keys(ctx, globEscape(st.opts.Prefix)+"*").Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 1 || keys[0] != st.Keys("u")[0] {
				t.Fatalf("%v: the state is in %q, want one key %q", a, keys, st.Keys("u")[0])
			}
			if !r.Allowed {
				continue
			}
			at, err := c.Do(ctx, "pexpiretime", keys[0]).Int64()
			if err != nil {
				t.Fatal(err)
			}
			want := (r.At + int64(r.ResetAfter) + 1e6 - 1) / 1e6 // rounded up
			if at != want {
				t.Errorf("%v: request %d judged at %d with ResetAfter %v: the key expires at %d ms, want %d", a, i, r.At, r.ResetAfter, at, want)
			}
		}
	}
}

// globEscape escapes the characters KEYS's pattern reads.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// TestTTLExpiresWhenFresh: under ServerClock, a key is gone from Redis
// once ResetAfter has passed on the server's clock, and still there just
// before. The store sets the expiry at the fresh time rounded up to a
// millisecond, and Redis removes a key once its millisecond clock is past
// the expiry: a key may be there until a millisecond after that.
func TestTTLExpiresWhenFresh(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	st := newStore(t, c, limiters.TokenBucket, limiters.Policy{Capacity: 2, Rate: limiters.Rate{N: 1, Per: 100 * time.Millisecond}},
		Options{Clock: ServerClock})
	var out [1]Result
	if err := st.Decide(ctx, []Request{{Key: "u", Cost: 2}}, out[:]); err != nil {
		t.Fatal(err)
	}
	d := out[0]
	if !d.Allowed || d.ResetAfter > 200*time.Millisecond || d.ResetAfter < 190*time.Millisecond {
		t.Fatalf("%+v", d)
	}
	fresh := d.At + int64(d.ResetAfter)
	const ms = int64(time.Millisecond)
	gone := (fresh+ms-1)/ms*ms + ms // the expiry, rounded up, and Redis's clock past it
	key := st.Keys("u")[0]
	// Exists, asked before the fresh time on the server's clock; gone,
	// asked after it.
	for {
		before, err1 := c.Time(ctx).Result()
		n, err2 := c.Exists(ctx, key).Result()
		after, err3 := c.Time(ctx).Result()
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		switch {
		case after.UnixNano() < fresh && n != 1:
			t.Fatalf("key gone %v before the bucket was full again", time.Duration(fresh-after.UnixNano()))
		case before.UnixNano() >= gone:
			if n != 0 {
				t.Fatalf("key still there %v after the bucket was full again", time.Duration(before.UnixNano()-fresh))
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSlidingLogMembers: requests at one instant are separate members of
// the sliding log's sorted set, in order, each with its time, the running
// total and its cost.
func TestSlidingLogMembers(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	st := newStore(t, c, limiters.SlidingLog, limiters.Policy{Limit: 10, Window: time.Minute}, Options{})
	for _, cost := range []int64{1, 1, 2, 1} {
		if d, err := st.Allow(ctx, "u", 5e9, cost); err != nil || !d.Allowed {
			t.Fatalf("%+v %v", d, err)
		}
	}
	ms, err := c.ZRangeWithScores(ctx, st.Keys("u")[0], 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	// 5e9 + 2^63 in 20 digits, the running total in 16, ":" and the cost.
	want := []string{
		"092233720418547758080000000000000001:1",
		"092233720418547758080000000000000002:1",
		"092233720418547758080000000000000004:2",
		"092233720418547758080000000000000005:1",
	}
	var got []string
	for _, z := range ms {
		got = append(got, z.Member.(string))
		if z.Score != 0 {
			t.Errorf("member %q score %v, want 0", z.Member, z.Score)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	d, _ := st.Allow(ctx, "u", 5e9, 6)
	if d.Allowed || d.Remaining != 5 {
		t.Errorf("%+v", d)
	}
}

// TestSlidingLogBoundedCost: a request's work in the sliding log does
// not grow with its entries. Half a million entries in the window, all
// expired at once by the next request: it drops at most eight of them,
// finds its window with lookups, and decides as limiters.Keyed does; the
// entries left behind count for nothing and go, eight per admission.
// (Every entry of the window went through the script, twice, before:
// with a limit of a million, the request that expired them took a
// second and stalled every client.)
func TestSlidingLogBoundedCost(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	n := 500_000
	if traceRequests < 200_000 {
		n = 50_000 // under the race detector
	}
	p := limiters.Policy{Limit: 1_000_000, Window: time.Hour}
	st := newStore(t, c, limiters.SlidingLog, p, Options{ExpiryMargin: replayMargin})
	t.Cleanup(func() { st.Reset(context.Background(), "u") })
	k, _ := limiters.NewKeyed(limiters.SlidingLog, p)
	const per = 5000 // requests per script call: one call per batch, for the one key
	reqs := make([]Request, per)
	out := make([]limiters.Decision, per)
	for start := 0; start < n; start += per {
		for i := range reqs {
			reqs[i] = Request{Key: "u", Now: int64(start+i) * int64(time.Millisecond), Cost: 1}
		}
		if err := st.AllowBatch(ctx, reqs, out); err != nil {
			t.Fatal(err)
		}
		for i, r := range reqs {
			if want := k.Allow(r.Key, r.Now, r.Cost); out[i] != want {
				t.Fatalf("request %d: got %+v want %+v", start+i, out[i], want)
			}
		}
	}
	key := st.Keys("u")[0]
	if got, _ := c.ZCard(ctx, key).Result(); got != int64(n) {
		t.Fatalf("%d entries, want %d", got, n)
	}
	later := int64(n)*int64(time.Millisecond) + int64(2*time.Hour)
	for i := range 3 {
		now := later + int64(i)
		began := time.Now()
		d, err := st.Allow(ctx, "u", now, 1)
		took := time.Since(began)
		if err != nil {
			t.Fatal(err)
		}
		if want := k.Allow("u", now, 1); d != want {
			t.Fatalf("after the window: got %+v want %+v", d, want)
		}
		left, _ := c.ZCard(ctx, key).Result()
		if want := int64(n - 8*(i+1) + i + 1); left != want {
			t.Errorf("admission %d after the window: %d entries left, want %d (8 dropped, 1 added)", i, left, want)
		}
		t.Logf("admission %d after %d entries expired: %v", i, n, took)
	}
}

// TestRefusesInexactPolicies: a policy the store cannot keep exactly is
// refused when the store is made, with a *ParamError that names the
// limiter and the parameter as package limiters names it, never a
// command-line flag; what it can keep, it takes: a sliding counter of
// 100 a day or 10,000 an hour, windows of a month or a year.
func TestRefusesInexactPolicies(t *testing.T) {
	c := NewClient([]string{"127.0.0.1:1"}, time.Second) // never contacted
	defer c.Close()
	rate := func(n int64, per time.Duration) limiters.Rate { return limiters.Rate{N: n, Per: per} }
	const day = 24 * time.Hour
	tests := []struct {
		a     limiters.Algorithm
		p     limiters.Policy
		param string
	}{
		{limiters.FixedWindow, limiters.Policy{Limit: 1 << 53, Window: time.Second}, "limit"},
		{limiters.SlidingLog, limiters.Policy{Limit: 1 << 53, Window: time.Second}, "limit"},
		{limiters.SlidingCounter, limiters.Policy{Limit: 9_007_199, Window: time.Hour}, "limit"},
		{limiters.SlidingBuckets, limiters.Policy{Limit: 5, Window: 8192 * time.Second, Buckets: 8192}, "buckets"},
		{limiters.TokenBucket, limiters.Policy{Capacity: 1_000_000, Rate: rate(1, 10*time.Second)}, "capacity"},
		{limiters.GCRA, limiters.Policy{Capacity: 1, Rate: rate(1, 1<<53)}, "rate"},
		{limiters.LeakyQueue, limiters.Policy{Capacity: 1, Rate: rate(1<<53, 3)}, "rate"},
		{limiters.LeakyBucket, limiters.Policy{Capacity: 1 << 40, Rate: rate(7, 3<<20)}, "capacity"},
		{limiters.TickQueue, limiters.Policy{Capacity: 100, Rate: rate(1, day)}, "rate"},
	}
	for _, tt := range tests {
		_, err := New(c, []Limiter{{Name: "x", Algorithm: tt.a, Policy: tt.p}}, Options{})
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Limiter != "x" || pe.Param != tt.param || strings.Contains(err.Error(), "--") {
			t.Errorf("%v %+v: %v, want a ParamError of limiter x naming %s, and no flag", tt.a, tt.p, err, tt.param)
		} else {
			t.Logf("%v: %v", tt.a, err)
		}
	}
	// Just inside, and long windows: accepted.
	accepted := []struct {
		a limiters.Algorithm
		p limiters.Policy
	}{
		{limiters.FixedWindow, limiters.Policy{Limit: 1<<53 - 1, Window: 1<<63 - 1}},
		{limiters.TokenBucket, limiters.Policy{Capacity: 1<<53 - 2, Rate: rate(1, 1)}},
		{limiters.SlidingCounter, limiters.Policy{Limit: 100, Window: day}},
		{limiters.SlidingCounter, limiters.Policy{Limit: 10_000, Window: time.Hour}},
		{limiters.SlidingCounter, limiters.Policy{Limit: 9_007_198, Window: 365 * day}},
		{limiters.SlidingBuckets, limiters.Policy{Limit: 5, Window: 4096 * time.Second, Buckets: 4096}},
	}
	for _, a := range keptAlgorithms() {
		// An algorithm the store does not keep is TestKeepsEveryAlgorithm's.
		if a.Windowed() && Supports(a) {
			for _, w := range []time.Duration{30 * day, 365 * day} {
				accepted = append(accepted, struct {
					a limiters.Algorithm
					p limiters.Policy
				}{a, limiters.Policy{Limit: 1000, Window: w, Buckets: 5}})
			}
		}
	}
	for _, tt := range accepted {
		if _, err := New(c, []Limiter{{Name: "x", Algorithm: tt.a, Policy: tt.p}}, Options{}); err != nil {
			t.Errorf("%v %+v: %v", tt.a, tt.p, err)
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
	for _, a := range keptAlgorithms() {
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

// TestServerClock: under ServerClock the server's time decides, from no
// epoch: a burst is cut at the capacity whatever times the callers pass,
// each result says the server's time, and the windows are aligned on it
// as the in-memory limiter aligns them on the caller's clock.
func TestServerClock(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	p := limiters.Policy{Capacity: 3, Rate: limiters.Rate{N: 1, Per: time.Hour}}
	st := newStore(t, c, limiters.TokenBucket, p, Options{Clock: ServerClock})
	allowed := 0
	for i := 0; i < 10; i++ {
		var out [1]Result
		// The times passed are ignored.
		if err := st.Decide(ctx, []Request{{Key: "u", Now: int64(i) * int64(time.Hour), Cost: 1}}, out[:]); err != nil {
			t.Fatal(err)
		}
		d := out[0]
		if off := time.Since(time.Unix(0, d.At)); off < -time.Minute || off > time.Minute {
			t.Errorf("judged at %v, %v from this host's clock", time.Unix(0, d.At), off)
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
	// A fixed window of a minute: the first request's reset is the time
	// to the next minute of the server's clock.
	fw := newStore(t, c, limiters.FixedWindow, limiters.Policy{Limit: 5, Window: time.Minute}, Options{Clock: ServerClock})
	var out [1]Result
	if err := fw.Decide(ctx, []Request{{Key: "u", Cost: 1}}, out[:]); err != nil {
		t.Fatal(err)
	}
	if want := time.Minute - time.Duration(out[0].At%int64(time.Minute)); out[0].ResetAfter != want {
		t.Errorf("judged at %d: ResetAfter %v, want %v", out[0].At, out[0].ResetAfter, want)
	}
}
