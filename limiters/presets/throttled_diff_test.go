package presets

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	lib "github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"

	"github.com/ratesim/ratesim/limiters"
)

// throttledQuotas are random RateQuotas and their preset parameters.
func throttledQuota(rng *rand.Rand) (lib.RateQuota, map[string]string) {
	units := []struct {
		name string
		per  func(int) lib.Rate
		max  int
	}{
		{"per_sec", lib.PerSec, 50}, {"per_min", lib.PerMin, 500},
		{"per_hour", lib.PerHour, 5000}, {"per_day", lib.PerDay, 100000},
	}
	u := units[rng.IntN(len(units))]
	n := 1 + rng.IntN(u.max)
	burst := rng.IntN(8)
	return lib.RateQuota{MaxRate: u.per(n), MaxBurst: burst},
		map[string]string{u.name: strconv.Itoa(n), "max_burst": strconv.Itoa(burst)}
}

// TestThrottledDifferential drives throttled's GCRARateLimiterCtx with its
// memstore, its clock set by SetTimeNow, and the throttled preset side by
// side on random traces (several keys, bursts, idle gaps over a minute,
// quantities up to MaxBurst+3, times to the nanosecond, keys going back in
// time), and fails on any request where they differ: limited or not, and
// the RateLimitResult's Remaining, ResetAfter and RetryAfter.
func TestThrottledDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 23))
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).UnixNano()
	ctx := context.Background()
	compared, differ := 0, 0
	for trial := 0; trial < 60; trial++ {
		quota, params := throttledQuota(rng)
		st, err := memstore.New(0)
		if err != nil {
			t.Fatal(err)
		}
		var now time.Time
		st.SetTimeNow(func() time.Time { return now })
		lim, err := lib.NewGCRARateLimiterCtx(lib.WrapStoreWithContext(st), quota)
		if err != nil {
			t.Fatal(err)
		}
		tab := table(t, "throttled", params)
		trace := randomTrace(rng, traceShape{keys: 1 + rng.IntN(12), requests: 2000, span: 10 * time.Minute, maxCost: int64(quota.MaxBurst + 3), backwards: true})
		for i, rq := range trace {
			now = time.Unix(0, base+rq.at)
			limited, res, err := lim.RateLimitCtx(ctx, strconv.Itoa(rq.key), int(rq.cost))
			if err != nil {
				t.Fatal(err)
			}
			got := tab.Allow(uint32(rq.key), base+rq.at, rq.cost)
			compared++
			if !sameThrottled(got, limited, res) {
				differ++
				if differ <= 5 {
					t.Errorf("trial %d %v, request %d (key %d, t %d, quantity %d): preset %+v; throttled limited %v %+v",
						trial, params, i, rq.key, base+rq.at, rq.cost, got, limited, res)
				}
			}
		}
	}
	proof(t, "throttled | %s, memstore with SetTimeNow in process | %d | %d", ThrottledVersion, compared, differ)
}

// sameThrottled reports whether the preset's decision d is throttled's
// answer: its RetryAfter of -1 is 0 when allowed, never when refused.
func sameThrottled(d limiters.Decision, limited bool, res lib.RateLimitResult) bool {
	retry := res.RetryAfter
	if retry < 0 {
		retry = 0
		if limited {
			retry = limiters.InfDuration
		}
	}
	return d.Allowed == !limited && d.Remaining == int64(res.Remaining) && d.ResetAfter == res.ResetAfter && d.RetryAfter == retry
}
