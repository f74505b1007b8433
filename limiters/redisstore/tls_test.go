package redisstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/internal/redistest"
	"github.com/ratesim/ratesim/limiters"
)

// equalsKeyedAll replays a short trace through every limiter of a store
// made on c, for every algorithm at once, and compares each decision with
// limiters.Keyed's.
func equalsKeyedAll(t *testing.T, c interface{}) {
	t.Helper()
	ctx := context.Background()
	ls := everyLimiter()
	st, err := New(clientOf(c), ls, Options{Prefix: testPrefix(t), ExpiryMargin: replayMargin})
	if err != nil {
		t.Fatal(err)
	}
	keyed := make([]*limiters.Keyed, len(ls))
	for i, l := range ls {
		keyed[i], _ = limiters.NewKeyed(l.Algorithm, l.Policy)
	}
	out := make([]limiters.Decision, len(ls))
	allowed := 0
	for i, q := range makeTrace(traceSpec{seed: 5, requests: 500, keys: 10, span: 5 * time.Second, maxCost: 3, jitter: time.Millisecond}) {
		if err := st.AllowAll(ctx, q.key, q.now, q.cost, out); err != nil {
			t.Fatal(err)
		}
		for j, k := range keyed {
			want := k.Allow(q.key, q.now, q.cost)
			if out[j] != want {
				t.Fatalf("request %d, %s: got %+v want %+v", i, ls[j].Name, out[j], want)
			}
			if want.Allowed {
				allowed++
			}
		}
	}
	if allowed == 0 {
		t.Error("nothing allowed")
	}
}

// TestTLS: rediss:// reaches a server that speaks TLS only, verifying its
// certificate against ?ca=FILE, or not at all with ?insecure; the system's
// roots do not know the test's CA, and redis:// does not speak TLS. The
// store decides through TLS as limiters.Keyed does.
func TestTLS(t *testing.T) {
	addr := redistest.Env(t, redistest.EnvTLS)
	ca := redistest.Env(t, redistest.EnvTLSCA)
	ctx := context.Background()
	for _, u := range []string{"rediss://" + addr + "/0?ca=" + ca, "rediss://" + addr + "/0?insecure"} {
		a, err := ParseURL(u)
		if err != nil {
			t.Fatal(err)
		}
		c, err := a.Connect(ctx, 2*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		t.Run(strings.TrimPrefix(u, "rediss://"+addr+"/0?"), func(t *testing.T) { equalsKeyedAll(t, c) })
		c.Close()
	}
	for _, tc := range []struct{ url, want string }{
		{"rediss://" + addr + "/0", "certificate"},
		{"redis://" + addr + "/0", "cannot reach redis"},
	} {
		a, _ := ParseURL(tc.url)
		if c, err := a.Connect(ctx, time.Second); err == nil || !strings.Contains(err.Error(), tc.want) {
			if c != nil {
				c.Close()
			}
			t.Errorf("%s: %v, want an error saying %q", tc.url, err, tc.want)
		}
	}
}

// TestSentinel: redis+sentinel:// finds the master its Sentinels watch,
// and the store decides there as limiters.Keyed does; the states are on
// the master and reach its replica.
func TestSentinel(t *testing.T) {
	sentinels := redistest.Env(t, redistest.EnvSentinel)
	master := redistest.Env(t, redistest.EnvSentinelMaster)
	ctx := context.Background()
	a, err := ParseURL("redis+sentinel://" + sentinels + "/" + master)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.Connect(ctx, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	role, err := c.Do(ctx, "role").Slice()
	if err != nil || len(role) == 0 || role[0] != "master" {
		t.Fatalf("ROLE through the Sentinels: %v %v, want master", role, err)
	}
	equalsKeyedAll(t, c)
	st := newStore(t, c, limiters.GCRA, policyFor(limiters.GCRA), Options{})
	if _, err := st.Allow(ctx, "replicated", 0, 1); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Do(ctx, "wait", 1, 5000).Int64(); err != nil || n != 1 {
		t.Errorf("WAIT 1: %v %v, want the replica to have the write", n, err)
	}
}
