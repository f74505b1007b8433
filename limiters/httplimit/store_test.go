package httplimit_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ratesim/ratesim/internal/redistest"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/headers"
	"github.com/ratesim/ratesim/limiters/httplimit"
	"github.com/ratesim/ratesim/limiters/redisstore"
)

// TestStoreSameAsKeyed: the middleware over a redisstore.Store, shared by
// the servers of a service, answers as it does over limiters.Keyed: the
// same statuses and fields, for every algorithm the store keeps (all of
// them: redisstore's TestKeepsEveryAlgorithm checks any it does not is
// refused).
func TestStoreSameAsKeyed(t *testing.T) {
	addr := redistest.Env(t, redistest.EnvAddr)
	client, err := redisstore.Connect(context.Background(), []string{addr}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, a := range limiters.AllAlgorithms() {
		if !redisstore.Supports(a) {
			continue
		}
		p := limiters.Policy{Limit: 4, Window: 2 * time.Second, Capacity: 4, Rate: limiters.Rate{N: 3, Per: 2 * time.Second}, Buckets: 4, Block: 3 * time.Second}
		// The prefix's second part is new to every run: the keys of an
		// earlier run on the same server live on for the margin.
		st, err := redisstore.New(client, []redisstore.Limiter{{Name: "api", Algorithm: a, Policy: p}},
			redisstore.Options{Prefix: fmt.Sprintf("httptest:%x:%x:", rng.Uint64(), rand.Uint64()), ExpiryMargin: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := limiters.NewKeyed(a, p)
		clock := &fakeClock{ns: 1000 * sec}
		m, err := httplimit.NewContext(st, userKey, httplimit.WithClock(clock.now), httplimit.WithCost(costOf),
			httplimit.WithStyle(headers.StyleBoth), httplimit.WithName("api"),
			httplimit.WithSleep(func(context.Context, time.Duration) error { return nil }))
		if err != nil {
			t.Fatal(err)
		}
		q, _ := headers.QuotaOf("api", a, p)
		if m.Quota() != q {
			t.Errorf("%v: Quota() = %+v, want %+v", a, m.Quota(), q)
		}
		h := m.Wrap(&ok{})
		for i := 0; i < 100; i++ {
			clock.ns += rng.Int64N(sec)
			user := "u" + strconv.Itoa(rng.IntN(3))
			cost := 1 + rng.Int64N(2)
			resp := serve(t, h, user, cost)
			d := ref.Allow(user, clock.ns, cost)
			want := http.Header{}
			headers.Set(want, headers.StyleBoth, []headers.Quota{q}, []limiters.Decision{d})
			if (resp.StatusCode == http.StatusOK) != d.Allowed {
				t.Fatalf("%v request %d: status %d, Keyed.Allow %+v", a, i, resp.StatusCode, d)
			}
			for _, name := range headers.Names() {
				if g, w := resp.Header.Get(name), want.Get(name); g != w {
					t.Errorf("%v request %d: %s = %q, want %q", a, i, name, g, w)
				}
			}
		}
	}
}

// failing is a limiter that cannot decide.
type failing struct{ err error }

func (f failing) Allow(context.Context, string, int64, int64) (limiters.Decision, error) {
	return limiters.Decision{}, f.err
}

// TestUnavailable: a request the limiter could not judge gets 503
// Service Unavailable, without a rate-limit field, and never reaches the
// handler; WithUnavailable answers it otherwise, with the error. A store
// whose failure policy lets requests through (FailOpen) has no error to
// give: its requests pass.
func TestUnavailable(t *testing.T) {
	quota := httplimit.WithQuota(headers.Quota{Name: "api", Limit: 3, WindowSeconds: 10})
	down := failing{errors.New("redisstore: dial tcp: connection refused")}
	m, err := httplimit.NewContext(down, nil, quota)
	if err != nil {
		t.Fatal(err)
	}
	next := &ok{}
	resp := serve(t, m.Wrap(next), "u", 1)
	if resp.StatusCode != http.StatusServiceUnavailable || next.served != 0 {
		t.Errorf("status %d, served %d: want 503 and nothing served", resp.StatusCode, next.served)
	}
	for _, name := range headers.Names() {
		if v := resp.Header.Get(name); v != "" {
			t.Errorf("%s: %q on a request not judged", name, v)
		}
	}
	var seen error
	m, _ = httplimit.NewContext(down, nil, quota, httplimit.WithUnavailable(func(w http.ResponseWriter, r *http.Request, err error) {
		seen = err
		w.WriteHeader(http.StatusTeapot)
	}))
	if resp := serve(t, m.Wrap(next), "u", 1); resp.StatusCode != http.StatusTeapot || seen != down.err {
		t.Errorf("WithUnavailable: status %d, error %v", resp.StatusCode, seen)
	}

	// Stores on a server that is not there.
	c := redisstore.NewClient([]string{"127.0.0.1:1"}, 100*time.Millisecond)
	defer c.Close()
	p := limiters.Policy{Capacity: 3, Rate: limiters.Rate{N: 1, Per: time.Second}}
	for _, tc := range []struct {
		failure redisstore.Failure
		status  int
	}{{redisstore.FailError, http.StatusServiceUnavailable}, {redisstore.FailOpen, http.StatusOK}, {redisstore.FailClosed, http.StatusTooManyRequests}} {
		st, err := redisstore.New(c, []redisstore.Limiter{{Name: "api", Algorithm: limiters.GCRA, Policy: p}}, redisstore.Options{Failure: tc.failure})
		if err != nil {
			t.Fatal(err)
		}
		m, err := httplimit.NewContext(st, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp := serve(t, m.Wrap(&ok{}), "u", 1); resp.StatusCode != tc.status {
			t.Errorf("on failure %v: status %d, want %d", tc.failure, resp.StatusCode, tc.status)
		}
	}
}
