package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// TestClusterEqualsKeyed: in a Redis Cluster, where a pipeline is split
// by node and a key's states share a slot by their hash tag, the store
// still decides as limiters.Keyed does, under every algorithm, alone and
// several limiters at once.
func TestClusterEqualsKeyed(t *testing.T) {
	c := connect(t, serverAddrs(t, "RATESIM_REDIS_CLUSTER"))
	const epoch = 42_000_000_007
	n := traceRequests / 10
	var ls []Limiter
	for _, a := range keptAlgorithms() {
		ls = append(ls, Limiter{Name: a.String(), Algorithm: a, Policy: policyFor(a)})
		t.Run(a.String(), func(t *testing.T) {
			st := newStore(t, c, a, policyFor(a), Options{Epoch: epoch, ExpiryMargin: replayMargin})
			reqs := makeTrace(traceSpec{
				seed: uint64(a) + 100, requests: n, keys: traceKeys / 10,
				base: epoch, span: time.Duration(n/(traceKeys/10)) * 150 * time.Millisecond,
				maxCost: 4, jitter: 3 * time.Millisecond,
			})
			compareKeyed(t, st, a, policyFor(a), reqs, 500)
		})
	}
	// All limiters at once for each request, in one round trip.
	st, err := New(c, ls, Options{Prefix: testPrefix(t), Epoch: epoch, ExpiryMargin: replayMargin})
	if err != nil {
		t.Fatal(err)
	}
	var keyed []*limiters.Keyed
	for _, l := range ls {
		k, _ := limiters.NewKeyed(l.Algorithm, l.Policy)
		keyed = append(keyed, k)
	}
	out := make([]limiters.Decision, len(ls))
	reqs := makeTrace(traceSpec{seed: 9, requests: 2000, keys: 20, base: epoch, span: 10 * time.Second, maxCost: 4})
	for i, q := range reqs {
		if err := st.AllowAll(context.Background(), q.key, q.now, q.cost, out); err != nil {
			t.Fatal(err)
		}
		for j, k := range keyed {
			if want := k.Allow(q.key, q.now, q.cost); out[j] != want {
				t.Fatalf("request %d, %s: got %+v want %+v", i, ls[j].Name, out[j], want)
			}
		}
	}
}
