package redisstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// allower is what Store and Naive share.
type allower interface {
	Allow(ctx context.Context, key string, now, cost int64) (limiters.Decision, error)
}

// burst sends 8 goroutines' worth of requests, all at one instant, for
// one key, and returns how many were allowed.
func burst(t *testing.T, st allower, key string) int64 {
	t.Helper()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := 0; i < 25; i++ {
				d, err := st.Allow(context.Background(), key, 1e9, 1)
				if err != nil {
					errs <- err
					return
				}
				if d.Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return allowed.Load()
}

// TestNaiveRace: the invariant is that a token bucket admits at most its
// capacity plus rate x elapsed; here nothing elapses (200 requests at one
// instant, from 8 goroutines, for one key), so at most the capacity, 10.
// The atomic store keeps it every time. The naive store's GET, decide, SET
// lets requests decide against the same state: it admits more.
func TestNaiveRace(t *testing.T) {
	c := testClient(t)
	l := Limiter{Name: "tb", Algorithm: limiters.TokenBucket, Policy: limiters.Policy{Capacity: 10, Rate: limiters.Rate{N: 1, Per: time.Hour}}}
	st, err := New(c, []Limiter{l}, Options{Prefix: testPrefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	naive, err := NewNaive(c, l, Options{Prefix: testPrefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	// Alone, the naive store decides as the atomic one does.
	for i := int64(0); i < 12; i++ {
		a, err1 := st.Allow(context.Background(), "alone", i, 1)
		b, err2 := naive.Allow(context.Background(), "alone", i, 1)
		if err1 != nil || err2 != nil || a != b {
			t.Fatalf("request %d: store %+v %v, naive %+v %v", i, a, err1, b, err2)
		}
	}
	worst := int64(0)
	for round := 0; round < 5; round++ {
		key := "k" + string(rune('a'+round))
		if n := burst(t, st, key); n != 10 {
			t.Fatalf("round %d: the atomic store admitted %d of a burst, want the capacity 10", round, n)
		}
		worst = max(worst, burst(t, naive, key))
		if worst > 10 {
			t.Logf("round %d: the naive store admitted %d of a burst with capacity 10", round, worst)
			return
		}
	}
	t.Errorf("the naive store never admitted more than the capacity (%d); the race did not show", worst)
}
