package presets

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/limiters"
)

// startRedisRate drives go-redis/redis_rate's AllowN, its Go
// code and its Lua script, on a redis-server of the test's own, in real
// time, and the redis-rate preset beside it. Random traces (several keys,
// bursts, idle gaps over 60 s, costs up to burst+2) under random limits;
// the script's clock is the server's, in microseconds, 2026's date and
// all.
//
// The script reads the server's clock (TIME) itself, so the test reads it
// too, just before and just after each call: the script's microsecond
// lies between. The preset is run at each microsecond of that bracket in
// turn, on the key's state so far, and the request counts as decided
// alike when at one of them every field matches the Result (allowed,
// remaining, retry_after, reset_after, as redis_rate reports them) and,
// when it was allowed, the tat the script stored (GET after the call)
// matches the preset's to the bit: that microsecond is the one the
// script used, and the key's state goes on from it. When no microsecond
// of the bracket matches, the decision differs and the test fails. The
// key expires at a millisecond Redis counts from its own clock when it
// writes the key, a little after TIME; it never comes before the key's
// tat, so requests are not kept off it.
func startRedisRate(t *testing.T, r *realRun) {
	client := startRedis(t)
	if client == nil {
		r.skip = "redis-server is not installed: no differential against redis_rate"
		return
	}
	limiter := redis_rate.NewLimiter(client)
	rng := rand.New(rand.NewPCG(2026, 25))
	type config struct {
		limit  redis_rate.Limit
		params map[string]string
	}
	configs := []config{
		{redis_rate.PerSecond(10), nil},
		{redis_rate.Limit{Rate: 3, Burst: 2, Period: 300 * time.Millisecond}, nil},
		{redis_rate.Limit{Rate: 1, Burst: 1, Period: time.Second}, nil}, // reset_after of exactly 1 s: keys expire before their tat
		{redis_rate.Limit{Rate: 7, Burst: 5, Period: 3 * time.Second}, nil},
	}
	var mu sync.Mutex
	compared, differ, widest := 0, 0, int64(0)
	var widths []int64
	for c, cfg := range configs {
		cfg.params = map[string]string{"rate": strconv.Itoa(cfg.limit.Rate), "burst": strconv.Itoa(cfg.limit.Burst), "period": cfg.limit.Period.String()}
		p, _ := Lookup("redis-rate")
		a, pol, err := p.Limiter(cfg.params)
		if err != nil {
			t.Fatal(err)
		}
		rule, _ := limiters.NewRule(a, pol)
		trace := randomTrace(rng, realShape(6, 3600, int64(cfg.limit.Burst+2)))
		byKey := map[int][]diffRequest{}
		for _, rq := range trace {
			byKey[rq.key] = append(byKey[rq.key], rq)
		}
		for key, reqs := range byKey {
			name := fmt.Sprintf("c%d:%d", c, key)
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				if !r.wait() {
					return
				}
				ctx := context.Background()
				var st limiters.RedisRateState
				for i, rq := range reqs {
					mu.Lock()
					stop := differ > 20
					mu.Unlock()
					if stop {
						return // the preset is off: the rest would only repeat it
					}
					sleepUntil(r.at(rq.at))
					before, err := client.Time(ctx).Result()
					if err != nil {
						r.errorf("%v", err)
						return
					}
					res, err := limiter.AllowN(ctx, name, cfg.limit, int(rq.cost))
					if err != nil {
						r.errorf("%v", err)
						return
					}
					after, err := client.Time(ctx).Result()
					if err != nil {
						r.errorf("%v", err)
						return
					}
					stored, err := client.Get(ctx, "rate:"+name).Result()
					if err != nil && err != redis.Nil {
						r.errorf("%v", err)
						return
					}
					next, ok := redisRateMatch(rule, st, before, after, rq.cost, res, stored)
					mu.Lock()
					compared++
					width := after.Sub(before).Microseconds()
					widths = append(widths, width)
					widest = max(widest, width)
					if !ok {
						differ++
						if differ <= 5 {
							_, d0 := st.Step(rule, before.UnixNano(), rq.cost)
							r.errorf("limit %v key %s request %d cost %d between %s and %s: redis_rate %+v (stored %q); the preset at the first microsecond %+v",
								cfg.limit, name, i, rq.cost, before.Format(time.RFC3339Nano), after.Format(time.RFC3339Nano), res, stored, d0)
						}
					} else {
						st = next
					}
					mu.Unlock()
				}
			}()
		}
	}
	r.judge = func(t *testing.T) {
		slices.Sort(widths)
		proof(t, "redis-rate | %s, its Go code and Lua on %s, real time | %d | %d (TIME bracket median %d µs, widest %d µs)",
			RedisRateVersion, redisServerVersion(client), compared, differ, widths[len(widths)/2], widest)
	}
}

// redisRateMatch finds a microsecond from before to after at which the
// preset decides as redis_rate did (res, and the tat it stored when it
// allowed), and returns the key's next state from it. The preset's tat
// grows with the time and its reset_after falls, so a binary search finds
// the first microsecond where the one reaches, or the other comes down to,
// redis_rate's; the microseconds from there on are tried until they pass
// it. Should that find none, every microsecond of the bracket is tried.
func redisRateMatch(rule *limiters.Rule, st limiters.RedisRateState, before, after time.Time, cost int64, res *redis_rate.Result, stored string) (limiters.RedisRateState, bool) {
	want := limiters.Decision{Allowed: res.Allowed > 0, Remaining: int64(res.Remaining), RetryAfter: res.RetryAfter, ResetAfter: res.ResetAfter}
	if want.RetryAfter < 0 {
		want.RetryAfter = 0 // -1: allowed
	}
	var tat float64
	byTat := want.Allowed && stored != ""
	if byTat {
		var err error
		if tat, err = strconv.ParseFloat(stored, 64); err != nil {
			return st, false
		}
	}
	try := func(us int64) (limiters.RedisRateState, bool) {
		next, d := st.Step(rule, us*1000, cost)
		if d.Allowed != want.Allowed || d.Remaining != want.Remaining || d.RetryAfter != want.RetryAfter || d.ResetAfter != want.ResetAfter {
			return next, false
		}
		if got, _, _ := next.Key(); byTat && got != tat {
			return next, false
		}
		return next, true
	}
	// reached reports whether at us the preset is at or past redis_rate.
	reached := func(us int64) bool {
		next, d := st.Step(rule, us*1000, cost)
		if byTat {
			got, _, _ := next.Key()
			return got >= tat
		}
		return d.ResetAfter <= want.ResetAfter
	}
	lo, hi := before.UnixMicro(), after.UnixMicro()
	first := hi + 1
	for a, b := lo, hi; a <= b; {
		mid := a + (b-a)/2
		if reached(mid) {
			first, b = mid, mid-1
		} else {
			a = mid + 1
		}
	}
	for us := first; us <= hi && us < first+64; us++ {
		if next, ok := try(us); ok {
			return next, true
		}
	}
	for us := lo; us <= hi; us++ {
		if next, ok := try(us); ok {
			return next, true
		}
	}
	return st, false
}
