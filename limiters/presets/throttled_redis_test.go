package presets

import (
	"context"
	encbin "encoding/binary"
	"fmt"
	"math/rand/v2"

	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	lib "github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/goredisstore.v9"

	"github.com/ratesim/ratesim/limiters"
)

// clockKey keys the context value a call's Redis TIME is noted in.
type clockKey struct{}

// redisClock notes the TIME replies of the commands run with a context
// holding a *time.Time under clockKey: the clock a store read.
type redisClock struct{}

func (redisClock) DialHook(next redis.DialHook) redis.DialHook { return next }

func (redisClock) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		noteTime(ctx, cmd)
		return err
	}
}

func (redisClock) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			noteTime(ctx, c)
		}
		return err
	}
}

func noteTime(ctx context.Context, cmd redis.Cmder) {
	if at, ok := ctx.Value(clockKey{}).(*time.Time); ok {
		if tc, ok := cmd.(*redis.TimeCmd); ok && tc.Err() == nil {
			*at = tc.Val()
		}
	}
}

// realSpan is how long the differentials against real servers run: long
// enough for every key's idle gap of over a minute.
const realSpan = 72 * time.Second

// realShape is the shape of their traces: idle gaps of 61 to 63 s.
func realShape(keys, requests int, maxCost int64) traceShape {
	return traceShape{keys: keys, requests: requests, span: realSpan, maxCost: maxCost, idle: 61 * time.Second, idleJitter: 2 * time.Second}
}

// startThrottledRedis drives throttled's GCRARateLimiterCtx
// with its Redis store (goredisstore.v9) on a redis-server of the test's
// own, in real time, and the throttled preset with store=redis on the
// times the store read: the reply of the TIME command of each call's
// GetWithTime, noted by a go-redis hook. Random traces (several keys,
// bursts, pauses of a few seconds, idle gaps over 60 s, quantities up to
// MaxBurst+3, microsecond times) under chosen and random quotas; any
// differing decision (limited, Remaining, ResetAfter, RetryAfter) fails.
// The store sets a key's expiry a round trip after it read the time (a
// loaded machine makes that long), so the test reads when Redis will
// expire the key (TIME and PTTL after each write), and a request within 3
// ms of that or of the time the preset says waits until 4 ms past both:
// which millisecond Redis counted from would decide that request, and
// nothing else. A call that runs late all the same (a loaded machine
// schedules it after the wait) and lands between the two expiries is
// judged with the key as Redis keeps it, to the expiry Redis reported,
// and counted in the row; any other difference fails.
func startThrottledRedis(t *testing.T, r *realRun) {
	client := startRedis(t)
	if client == nil {
		r.skip = "redis-server is not installed: no differential against throttled's Redis store"
		return
	}
	client.AddHook(redisClock{})
	rng := rand.New(rand.NewPCG(2026, 24))
	var mu sync.Mutex
	compared, differ, guarded, early, late := 0, 0, 0, 0, 0
	// Periods of a second or two and more, so that ttls run over whole
	// seconds by a fraction, which the store rounds down; the last quota
	// is random.
	quotas := []lib.RateQuota{
		{MaxRate: lib.PerHour(1895), MaxBurst: 2}, // 1.8997 s
		{MaxRate: lib.PerMin(23), MaxBurst: 1},    // 2.6087 s
		{MaxRate: lib.PerHour(2571), MaxBurst: 3}, // 1.4002 s
	}
	names := []map[string]string{{"per_hour": "1895", "max_burst": "2"}, {"per_min": "23", "max_burst": "1"}, {"per_hour": "2571", "max_burst": "3"}}
	for cfg := 0; cfg < 4; cfg++ {
		var quota lib.RateQuota
		var params map[string]string
		if cfg < len(quotas) {
			quota, params = quotas[cfg], names[cfg]
		} else {
			quota, params = throttledQuota(rng)
		}
		params["store"] = "redis"
		p, _ := Lookup("throttled")
		a, pol, err := p.Limiter(params)
		if err != nil {
			t.Fatal(err)
		}
		rule, _ := limiters.NewRule(a, pol)
		store, err := goredisstore.NewCtx(client, fmt.Sprintf("cfg%d:", cfg))
		if err != nil {
			t.Fatal(err)
		}
		lim, err := lib.NewGCRARateLimiterCtx(store, quota)
		if err != nil {
			t.Fatal(err)
		}
		// Pauses of up to 7 s, across which keys whose ttl rounds down
		// expire before their tat.
		shape := realShape(48, 1600, int64(quota.MaxBurst+3))
		shape.pauses = 7 * time.Second
		trace := randomTrace(rng, shape)
		byKey := map[int][]diffRequest{}
		for _, rq := range trace {
			byKey[rq.key] = append(byKey[rq.key], rq)
		}
		for key, reqs := range byKey {
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				if !r.wait() {
					return
				}
				var st []byte  // the preset's state, as Rule.StepEncoded keeps it
				var real int64 // the last millisecond Redis keeps the key in
				var haveReal bool
				for i, rq := range reqs {
					sleepUntil(r.at(rq.at))
					_, expire, ok := throttledKey(st)
					if offExpiry(expire, real, ok, haveReal) {
						mu.Lock()
						guarded++
						mu.Unlock()
					}
					var at time.Time
					ctx := context.WithValue(context.Background(), clockKey{}, &at)
					limited, res, err := lim.RateLimitCtx(ctx, strconv.Itoa(key), int(rq.cost))
					if err != nil {
						r.errorf("%v", err)
						return
					}
					tat, expire, kept := throttledKey(st)
					earlyExpiry := kept && tat > at.UnixNano() && expire < at.UnixMilli()
					next, d, err := rule.StepEncoded(st, at.UnixNano(), rq.cost, nil)
					if err != nil {
						r.errorf("%v", err)
						return
					}
					if ms := at.UnixMilli(); !sameThrottled(d, limited, res) && kept && haveReal &&
						ms >= min(expire, real)-3 && ms <= max(expire, real)+3 {
						// The call ran late (a loaded machine), into the
						// milliseconds between the expiry the preset counts
						// from the TIME the store read and the one Redis
						// counts from its write, a round trip later, past
						// the guard above: Redis's expiry decides there.
						// The key as Redis keeps it:
						alt := encbin.LittleEndian.AppendUint64(encbin.LittleEndian.AppendUint64(nil, uint64(tat)), uint64(real))
						if n2, d2, err := rule.StepEncoded(append(alt, 1), at.UnixNano(), rq.cost, nil); err == nil && sameThrottled(d2, limited, res) {
							next, d = n2, d2
							mu.Lock()
							late++
							mu.Unlock()
						}
					}
					st = next
					if !limited {
						real, haveReal = expiresAt(context.Background(), client, fmt.Sprintf("cfg%d:%d", cfg, key))
					}
					mu.Lock()
					compared++
					if earlyExpiry {
						early++
					}
					if !sameThrottled(d, limited, res) {
						differ++
						if differ <= 5 {
							r.errorf("config %v key %d request %d at %v quantity %d: preset %+v; throttled limited %v %+v",
								params, key, i, at.Format(time.RFC3339Nano), rq.cost, d, limited, res)
						}
					}
					mu.Unlock()
				}
			}()
		}
	}
	r.judge = func(t *testing.T) {
		proof(t, "throttled store=redis | %s, goredisstore.v9 on %s, real time | %d | %d (%d found their key expired before its tat; %d moved off an expiry; %d ran late into it, judged by Redis's expiry)",
			ThrottledVersion, redisServerVersion(client), compared, differ, early, guarded, late)
		if early == 0 {
			t.Error("no request found its key expired before its tat: the traces do not reach the TTL's rounding")
		}
	}
}

// redisServerVersion returns the server's redis_version.
func redisServerVersion(c *redis.Client) string {
	info, err := c.InfoMap(context.Background(), "server").Result()
	if err != nil {
		return "redis-server"
	}
	return "redis-server " + info["Server"]["redis_version"]
}

// throttledKey is limiters.ThrottledState.Key of a state as
// Rule.StepEncoded keeps it: the tat and the expiry, little-endian
// words, then whether there is a key.
func throttledKey(st []byte) (tat, expire int64, ok bool) {
	if len(st) != 17 {
		return 0, 0, false
	}
	return int64(encbin.LittleEndian.Uint64(st)), int64(encbin.LittleEndian.Uint64(st[8:])), st[16] == 1
}
