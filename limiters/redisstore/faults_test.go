package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/limiters"
)

// TestLowerLimitReadsFull: a deploy that lowers a limit in place (100 to
// 10, after 50 requests) just works, under every failure policy: the
// state above the new limit reads as full, every request is refused for
// want of room, with no error and no failure decision, until the window
// has passed or the bucket drained. (It was "corrupt state" for every
// active key until it expired.)
func TestLowerLimitReadsFull(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	for _, a := range keptAlgorithms() {
		for _, failure := range []Failure{FailError, FailOpen} {
			high, low := limiters.Policy{Limit: 100, Window: time.Hour}, limiters.Policy{Limit: 10, Window: time.Hour}
			if !a.Windowed() {
				rate := limiters.Rate{N: 1, Per: time.Minute}
				high, low = limiters.Policy{Capacity: 100, Rate: rate}, limiters.Policy{Capacity: 10, Rate: rate}
			}
			before := newStore(t, c, a, high, Options{ExpiryMargin: replayMargin})
			after := newStore(t, c, a, low, Options{Prefix: before.opts.Prefix, Failure: failure, ExpiryMargin: replayMargin})
			const t0 = int64(1e12)
			for i := range 50 {
				if d, err := before.Allow(ctx, "u", t0, 1); err != nil || !d.Allowed {
					t.Fatalf("%v: request %d under the limit of 100: %+v %v", a, i, d, err)
				}
			}
			for i := range 5 {
				d, err := after.Allow(ctx, "u", t0+int64(i+1)*int64(time.Second), 1)
				if err != nil || d.Allowed || d.Remaining != 0 || d.Reason != a.Refusal() {
					t.Errorf("%v, on failure %v: request %d under the new limit of 10: %+v %v, want a refusal for want of room", a, failure, i, d, err)
				}
			}
			if n := after.FailureDecisions(); n != 0 {
				t.Errorf("%v: %d failure decisions", a, n)
			}
			// Once the window has passed (the queue, the bucket drained),
			// the key is fresh.
			d, err := after.Allow(ctx, "u", t0+int64(3*time.Hour), 1)
			if err != nil || !d.Allowed {
				t.Errorf("%v, on failure %v: long after: %+v %v", a, failure, d, err)
			}
		}
	}
}

// TestPermanentErrorsAreErrors: replies that say the store is
// misconfigured are errors under every failure policy, never decisions
// of FailOpen or FailClosed, and are not counted as such: WRONGTYPE
// (another application's string at the key), NOPERM (an ACL user
// without EVALSHA), READONLY (a replica); and NOAUTH (a server that
// wants a password) when the store connects. Before, they opened the gate: 10 of 10 allowed against a
// capacity of 3.
func TestPermanentErrorsAreErrors(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	p := limiters.Policy{Capacity: 3, Rate: limiters.Rate{N: 1, Per: time.Hour}}
	check := func(what string, st *Store, want string) {
		t.Helper()
		for i := range 10 {
			d, err := st.Allow(ctx, "u", int64(i), 1)
			if err == nil || !strings.Contains(err.Error(), want) || d != (limiters.Decision{}) {
				t.Fatalf("%s, on failure %v: request %d: %+v %v, want an error saying %s", what, st.opts.Failure, i, d, err, want)
			}
			if Transient(err) {
				t.Errorf("%s: Transient(%v) = true", what, err)
			}
		}
		if n := st.FailureDecisions(); n != 0 {
			t.Errorf("%s: %d failure decisions", what, n)
		}
	}
	for _, failure := range []Failure{FailOpen, FailClosed} {
		for _, a := range keptAlgorithms() {
			st := newStore(t, c, a, policyFor(a), Options{Failure: failure})
			if err := c.Set(ctx, st.Keys("u")[0], "another application's", 0).Err(); err != nil {
				t.Fatal(err)
			}
			check("WRONGTYPE, "+a.String(), st, "WRONGTYPE")
		}
	}

	addr, _ := scratchServer(t, "--requirepass", "secret")
	admin, err := Address{Addrs: []string{addr}, Password: "secret"}.NewClient(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.Do(ctx, "acl", "setuser", "reader", "on", ">pw", "~*", "+@all", "-evalsha", "-eval").Err(); err != nil {
		t.Fatal(err)
	}
	reader, _ := Address{Addrs: []string{addr}, Username: "reader", Password: "pw"}.NewClient(time.Second)
	defer reader.Close()
	// A client that has not authenticated: Connect says so.
	if _, err := (Address{Addrs: []string{addr}}).Connect(ctx, time.Second); err == nil || !strings.Contains(err.Error(), "NOAUTH") || Transient(errors.Unwrap(err)) {
		t.Errorf("Connect without the password: %v, want NOAUTH", err)
	}
	for _, failure := range []Failure{FailOpen, FailClosed} {
		check("NOPERM", newStore(t, reader, limiters.GCRA, p, Options{Failure: failure}), "NOPERM")
	}

	// A replica of the server: it refuses writes.
	replicaAddr, _ := scratchServer(t, "--replicaof", strings.Replace(addr, ":", " ", 1), "--masterauth", "secret")
	replica := NewClient([]string{replicaAddr}, time.Second)
	defer replica.Close()
	for _, failure := range []Failure{FailOpen, FailClosed} {
		check("READONLY", newStore(t, replica, limiters.GCRA, p, Options{Failure: failure}), "READONLY")
	}
}

// TestTransient: which errors the failure policy decides.
func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{proto("OOM command not allowed when used memory > 'maxmemory'."), true},
		{proto("LOADING Redis is loading the dataset in memory"), true},
		{proto("BUSY Redis is busy running a script."), true},
		{proto("CLUSTERDOWN The cluster is down"), true},
		{proto("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{proto("MASTERDOWN Link with MASTER is down"), true},
		{proto("ERR max number of clients reached"), true},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), true},
		{context.DeadlineExceeded, true},
		{proto("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{proto("NOPERM User reader has no permissions to run the 'evalsha' command"), false},
		{proto("READONLY You can't write against a read only replica."), false},
		{proto("CROSSSLOT Keys in request don't hash to the same slot"), false},
		{proto("NOAUTH Authentication required."), false},
		{proto("ERR redisstore: corrupt state in k"), false},
		{context.Canceled, false},
		{redis.ErrClosed, false},
		{ErrTimeRange, false},
		{&ParamError{Limiter: "x", Param: "limit"}, false},
		{storeErrorf("no limiter %d", 3), false},
		{storeErrorf("script for %s replied %v", "x", []any{int64(1)}), false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// proto returns an error that says it is a reply of the server's, as
// go-redis's own are (redis.Error).
func proto(msg string) error { return redisError(msg) }

// redisError is an error that says it is a reply of the server's, as
// go-redis's own are (redis.Error).
type redisError string

func (e redisError) Error() string { return string(e) }
func (redisError) RedisError()     {}

// TestScriptFlushUnderConcurrentPipelines: eight clients send pipelines of
// 64 requests, several for one key in each, while SCRIPT FLUSH runs every
// few milliseconds: under FailOpen not one request is left to the failure
// policy, and every decision equals limiters.Keyed's. (A request whose
// script was flushed and a later one of its key, run once another client
// had loaded it again, could not be put back in order: 90 to 676 failure
// decisions a flush.)
func TestScriptFlushUnderConcurrentPipelines(t *testing.T) {
	addr, _ := scratchServer(t) // SCRIPT FLUSH is the server's
	c := connect(t, []string{addr})
	ctx := context.Background()
	ls := everyLimiter()
	st, err := New(c, ls, Options{Prefix: testPrefix(t), Failure: FailOpen, ExpiryMargin: replayMargin})
	if err != nil {
		t.Fatal(err)
	}
	const clients, batch = 8, 64
	var flushes atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				if c.ScriptFlush(ctx).Err() == nil {
					flushes.Add(1)
				}
			}
		}
	})
	errs := make([]error, clients)
	var clientsWG sync.WaitGroup
	for w := range clients {
		clientsWG.Go(func() {
			keyed := make([]*limiters.Keyed, len(ls))
			for i, l := range ls {
				keyed[i], _ = limiters.NewKeyed(l.Algorithm, l.Policy)
			}
			reqs := makeTrace(traceSpec{seed: uint64(w) + 40, requests: traceRequests / 200, keys: 6, span: 30 * time.Second, maxCost: 3, jitter: time.Millisecond})
			for start := 0; start < len(reqs); start += batch / len(ls) {
				var rs []Request
				for _, q := range reqs[start:min(start+batch/len(ls), len(reqs))] {
					for l := range ls {
						rs = append(rs, Request{Limiter: l, Key: q.key + "." + string(rune('a'+w)), Now: q.now, Cost: q.cost})
					}
				}
				out := make([]limiters.Decision, len(rs))
				if err := st.AllowBatch(ctx, rs, out); err != nil {
					errs[w] = err
					return
				}
				for j, r := range rs {
					if want := keyed[r.Limiter].Allow(r.Key, r.Now, r.Cost); out[j] != want {
						errs[w] = errors.New(ls[r.Limiter].Name + ": a decision differs from limiters.Keyed's")
						return
					}
				}
			}
		})
	}
	clientsWG.Wait()
	close(stop)
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("client %d: %v", w, err)
		}
	}
	if flushes.Load() == 0 {
		t.Fatal("no SCRIPT FLUSH ran")
	}
	if n := st.FailureDecisions(); n != 0 {
		t.Errorf("%d failure decisions after %d SCRIPT FLUSH", n, flushes.Load())
	}
	t.Logf("%d SCRIPT FLUSH, 0 failure decisions", flushes.Load())
}
