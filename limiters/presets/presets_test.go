package presets

import (
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

const (
	sec = int64(time.Second)
	ms  = int64(time.Millisecond)
)

// table returns a Table of the preset name with params.
func table(t *testing.T, name string, params map[string]string) *limiters.Table {
	t.Helper()
	p, ok := Lookup(name)
	if !ok {
		t.Fatalf("no preset %s", name)
	}
	a, pol, err := p.Limiter(params)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := limiters.NewTable(a, pol)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// step is one request of a fact test and what the library answers.
type step struct {
	key       uint32
	at, cost  int64
	allowed   bool
	remaining int64
	// retry and reset are checked unless negative.
	retry, reset time.Duration
	state        string // the --explain text, checked when not empty
}

// run replays steps through tab, failing on the first difference.
func run(t *testing.T, tab *limiters.Table, steps []step) {
	t.Helper()
	for i, s := range steps {
		d, text := tab.AllowExplain(s.key, s.at, s.cost, time.Second, nil)
		switch {
		case d.Allowed != s.allowed, d.Remaining != s.remaining,
			s.retry >= 0 && d.RetryAfter != s.retry, s.reset >= 0 && d.ResetAfter != s.reset,
			s.state != "" && string(text) != s.state:
			t.Fatalf("step %d: key %d at %v cost %d: %+v %q, want allowed %v remaining %d retry %v reset %v %q",
				i, s.key, time.Duration(s.at), s.cost, d, text, s.allowed, s.remaining, s.retry, s.reset, s.state)
		}
	}
}

// TestEnvoyStopWhenOver: with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT
// and one descriptor the service still increments the over-limit key
// itself (src/redis/fixed_cache_impl.go: getHitsAddend returns the
// hits_addend of a key that is near its limit): the setting spares only a
// request's other descriptors. requests_per_unit=5, unit=minute, hits 3,
// 3, 1 at 0, 1, 2 s: OK, OVER_LIMIT (counter 6), OVER_LIMIT (counter 7).
func TestEnvoyStopWhenOver(t *testing.T) {
	tab := table(t, "envoy", map[string]string{"requests_per_unit": "5", "unit": "minute", "stop_when_over": "true"})
	run(t, tab, []step{
		{at: 0, cost: 3, allowed: true, remaining: 2, retry: 0, reset: time.Minute, state: "window [0,60) hits 3"},
		{at: sec, cost: 3, allowed: false, retry: 59 * time.Second, reset: 59 * time.Second, state: "window [0,60) hits 6 near 1 over 1"},
		{at: 2 * sec, cost: 1, allowed: false, retry: 58 * time.Second, reset: 58 * time.Second, state: "window [0,60) hits 7 near 1 over 2"},
	})
}

// TestEnvoyCountsAboveLimit: the counter is incremented before it is
// compared (INCRBY in the pipeline, then GetResponseDescriptorStatus in
// src/limiter/base_limiter.go), so a hits_addend above the limit is
// counted too. Limit 5 a minute, hits_addend 7 then 1: both refused; the
// 7 gets LimitRemaining 0 and DurationUntilReset to the window's end,
// near_limit +1 and over_limit +2 (checkOverLimitThreshold).
func TestEnvoyCountsAboveLimit(t *testing.T) {
	tab := table(t, "envoy", map[string]string{"requests_per_unit": "5", "unit": "minute"})
	run(t, tab, []step{
		{at: 10 * sec, cost: 7, allowed: false, retry: limiters.InfDuration, reset: 50 * time.Second, state: "window [0,60) hits 7 near 1 over 2"},
		{at: 11 * sec, cost: 1, allowed: false, retry: 49 * time.Second, reset: 49 * time.Second, state: "window [0,60) hits 8 near 1 over 3"},
		{at: 60 * sec, cost: 1, allowed: true, remaining: 4, retry: 0, reset: time.Minute},
	})
}

// TestEnvoyWholeSeconds: the service reads the time in whole Unix
// seconds (TimeSource.UnixNow) and reports DurationUntilReset as
// unit - now%unit seconds (src/utils/utilities.go, CalculateReset): at
// 0.5 s into a minute it is 60 s, not 59.5 s. Units go up to a year of
// 365 days; a month is 30 days (UnitToDivider).
func TestEnvoyWholeSeconds(t *testing.T) {
	tab := table(t, "envoy", map[string]string{"requests_per_unit": "1", "unit": "minute"})
	run(t, tab, []step{
		{at: sec / 2, cost: 1, allowed: true, remaining: 0, retry: 0, reset: time.Minute},
		{at: 59*sec + sec/2, cost: 1, allowed: false, retry: time.Second / 2, reset: time.Second},
	})
	for unit, days := range map[string]int64{"week": 7, "month": 30, "year": 365} {
		tab := table(t, "envoy", map[string]string{"requests_per_unit": "1", "unit": unit})
		if d := tab.Allow(0, 0, 1); d.ResetAfter != time.Duration(days)*24*time.Hour {
			t.Errorf("%s: reset %v, want %d days", unit, d.ResetAfter, days)
		}
	}
}

// TestEnvoyBefore1970: the window's cache key is (now/unit)*unit with
// Go's division (src/limiter/cache_key.go), truncated toward zero, so
// the seconds -59 to 59 share window 0 of a minute, and the remainder of
// CalculateReset is negative before 1970.
func TestEnvoyBefore1970(t *testing.T) {
	tab := table(t, "envoy", map[string]string{"requests_per_unit": "2", "unit": "minute"})
	run(t, tab, []step{
		{at: -59 * sec, cost: 1, allowed: true, remaining: 1, retry: 0, reset: 119 * time.Second},
		{at: 30 * sec, cost: 1, allowed: true, remaining: 0, retry: 0, reset: 30 * time.Second},
		{at: 59 * sec, cost: 1, allowed: false, retry: time.Second, reset: time.Second},
		{at: 60 * sec, cost: 1, allowed: true, remaining: 1, retry: 0, reset: time.Minute},
	})
}

// TestEnvoyNearLimit: the near-limit threshold is floor(limit * 0.8),
// computed as the service computes it (the limit as a float32 times the
// ratio, base_limiter.go); hits above it and within the limit are near,
// the rest over.
func TestEnvoyNearLimit(t *testing.T) {
	if limiters.NearLimit(10) != 8 || limiters.NearLimit(1) != 0 || limiters.NearLimit(7) != 5 {
		t.Fatalf("NearLimit: %d %d %d", limiters.NearLimit(10), limiters.NearLimit(1), limiters.NearLimit(7))
	}
	tab := table(t, "envoy", map[string]string{"requests_per_unit": "10", "unit": "hour"})
	var text []byte
	for i := 0; i < 12; i++ {
		_, text = tab.AllowExplain(0, int64(i)*sec, 1, time.Second, text[:0])
	}
	if got := string(text); got != "window [0,3600) hits 12 near 2 over 2" {
		t.Fatalf("state %q", got)
	}
}

// TestRedisRateDate: the script counts float64 seconds since
// 2017-01-01; since 2025-07-04T21:24:16Z (2^28 s later) each 0.1 s
// emission step rounds up to +23.8 ns, so PerSecond(10)'s first request
// gets Remaining 8 where the exact GCRA gives 9; in 2024 it gets 9.
func TestRedisRateDate(t *testing.T) {
	for _, c := range []struct {
		at        time.Time
		remaining int64
	}{
		{time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC), 9},
		{time.Date(2025, 7, 4, 21, 24, 15, 0, time.UTC), 9},
		{time.Date(2025, 7, 4, 21, 24, 17, 0, time.UTC), 8},
		{time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 8},
	} {
		tab := table(t, "redis-rate", map[string]string{"rate": "10", "burst": "10"})
		if d := tab.Allow(0, c.at.UnixNano(), 1); !d.Allowed || d.Remaining != c.remaining {
			t.Errorf("first request at %v: %+v, want remaining %d", c.at, d, c.remaining)
		}
	}
}

// TestRedisRateSameMicrosecond: at 2026's magnitude, 11 requests in the
// same microsecond let 9 through, not 10: the tenth's tat lands 238 ns
// past the burst offset. Refused, redis_rate's Result has Remaining 0.
// A cost above the burst gets a finite retry_after, 100.000023 ms for
// cost 11 at rate=10,burst=10 (allowN: retry_after = diff * -1).
func TestRedisRateSameMicrosecond(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	tab := table(t, "redis-rate", map[string]string{"rate": "10", "burst": "10"})
	allowed := 0
	for i := 0; i < 11; i++ {
		d := tab.Allow(0, at, 1)
		if d.Allowed {
			allowed++
		} else if d.Remaining != 0 || d.RetryAfter != 238*time.Nanosecond || d.Reason != limiters.ReasonTooEarly {
			t.Fatalf("request %d refused with %+v, want remaining 0, retry 238ns", i, d)
		}
	}
	if allowed != 9 {
		t.Fatalf("%d of 11 allowed, want 9", allowed)
	}
	if d := tab.Allow(1, at, 11); d.Allowed || d.RetryAfter != 100000023*time.Nanosecond || d.Reason != limiters.ReasonCost {
		t.Fatalf("cost 11: %+v, want refused with retry 100.000023ms", d)
	}
}

// TestRedisRateExpiry: the script sets the key with EX
// ceil(reset_after) seconds, which Redis counts from the millisecond of the
// write and keeps through the millisecond it ends in (expired when now >
// when): the key never expires before its tat, so a request after it
// finds no key exactly when a kept key would decide as none. rate=1,
// burst=1: a request at 0.9 ms into a second leaves a tat at 1000.9 ms and
// a key through millisecond 1000; at 1000.5 ms it is refused, at 1001 ms
// the key is gone and the request passes, as it would against the key.
func TestRedisRateExpiry(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	tab := table(t, "redis-rate", map[string]string{"rate": "1", "burst": "1"})
	if d := tab.Allow(0, at+900*int64(time.Microsecond), 1); !d.Allowed || d.ResetAfter != time.Second {
		t.Fatalf("first: %+v", d)
	}
	if d := tab.Allow(0, at+1000*ms+500*int64(time.Microsecond), 1); d.Allowed {
		t.Fatalf("in the key's last millisecond, before its tat: %+v, want refused", d)
	}
	if tab.Idle(0, at+1000*ms+500*int64(time.Microsecond)) {
		t.Fatal("the key is idle before its tat")
	}
	if !tab.Idle(0, at+1001*ms) {
		t.Fatal("the key is not idle once expired")
	}
	if d := tab.Allow(0, at+1001*ms, 1); !d.Allowed {
		t.Fatalf("after the key expired: %+v, want allowed", d)
	}
}

// TestXTimeRateSubNanosecond: x/time/rate converts a deficit to a wait in
// whole nanoseconds, truncated; a request whose wait truncates to 0 ns
// passes. r=3, b=1, requests at 1700000000000000000 and
// 1700000000333333333 ns: the library allows the second, where an exact
// bucket refuses it 1 ns early.
func TestXTimeRateSubNanosecond(t *testing.T) {
	tab := table(t, "x-time-rate", map[string]string{"r": "3", "b": "1"})
	run(t, tab, []step{
		{at: 1700000000000000000, cost: 1, allowed: true, remaining: 0, retry: 0, reset: -1},
		{at: 1700000000333333333, cost: 1, allowed: true, remaining: 0, retry: 0, reset: -1},
	})
}

// TestXTimeRateFloatTokens: every=7ms, b=3: three at 0, then requests at
// 18 ms and 21 ms: TokensAt(21ms) is 0.99999999999999978, so a
// TokensAt-based remaining is 0 where the exact bucket holds 1.
func TestXTimeRateFloatTokens(t *testing.T) {
	tab := table(t, "x-time-rate", map[string]string{"every": "7ms", "b": "3"})
	run(t, tab, []step{
		{at: 0, cost: 1, allowed: true, remaining: 2, retry: 0, reset: -1},
		{at: 0, cost: 1, allowed: true, remaining: 1, retry: 0, reset: -1},
		{at: 0, cost: 1, allowed: true, remaining: 0, retry: 0, reset: -1},
		{at: 18 * ms, cost: 1, allowed: true, remaining: 1, retry: 0, reset: -1},
		{at: 21 * ms, cost: 1, allowed: true, remaining: 0, retry: 0, reset: -1, state: "tokens 0.9999999999999998"},
	})
}

// TestXTimeRateClockBack: a time earlier than the limiter's last refills
// nothing (advance takes the earlier time as last) and, allowed, becomes
// its last: at r=1, b=2, requests at 10 s, 9 s and 10 s all pass, the
// third with the second it refilled since 9 s.
func TestXTimeRateClockBack(t *testing.T) {
	tab := table(t, "x-time-rate", map[string]string{"r": "1", "b": "2"})
	run(t, tab, []step{
		{at: 10 * sec, cost: 1, allowed: true, remaining: 1, retry: 0, reset: time.Second},
		{at: 9 * sec, cost: 1, allowed: true, remaining: 0, retry: 0, reset: 2 * time.Second},
		{at: 10 * sec, cost: 1, allowed: true, remaining: 0, retry: 0, reset: 2 * time.Second},
		{at: 10 * sec, cost: 1, allowed: false, remaining: 0, retry: time.Second, reset: 2 * time.Second},
	})
}

// TestXTimeRateFact: the documentation of NewLimiter: "it allows events
// up to rate r and permits bursts of at most b tokens". NewLimiter(1, 3):
// three at t=0 pass, a fourth waits 1 s, one more passes at t=1 s; a cost
// above b never passes.
func TestXTimeRateFact(t *testing.T) {
	tab := table(t, "x-time-rate", map[string]string{"r": "1", "b": "3"})
	run(t, tab, []step{
		{at: 0, cost: 1, allowed: true, remaining: 2, retry: 0, reset: time.Second},
		{at: 0, cost: 1, allowed: true, remaining: 1, retry: 0, reset: 2 * time.Second},
		{at: 0, cost: 1, allowed: true, remaining: 0, retry: 0, reset: 3 * time.Second},
		{at: 0, cost: 1, allowed: false, remaining: 0, retry: time.Second, reset: 3 * time.Second},
		{at: sec, cost: 1, allowed: true, remaining: 0, retry: 0, reset: 3 * time.Second},
		{at: sec, cost: 4, allowed: false, remaining: 0, retry: limiters.InfDuration, reset: 3 * time.Second},
	})
}

// TestThrottledQuantityAboveBurst: a quantity above MaxBurst+1 is refused
// without setting the ttl, which stays 0 (rate.go, RateLimitCtx: the
// limited branch sets it only when increment <= delayVariationTolerance):
// Remaining is MaxBurst+1 and ResetAfter 0 even on a key with state.
// per_sec=1, max_burst=2: cost 1 at 0, then cost 4 at 0.1 s.
func TestThrottledQuantityAboveBurst(t *testing.T) {
	tab := table(t, "throttled", map[string]string{"per_sec": "1", "max_burst": "2"})
	run(t, tab, []step{
		{at: 0, cost: 1, allowed: true, remaining: 2, retry: 0, reset: time.Second},
		{at: sec / 10, cost: 4, allowed: false, remaining: 3, retry: limiters.InfDuration, reset: 0},
		{at: sec / 10, cost: 3, allowed: false, remaining: 2, retry: 900 * time.Millisecond, reset: 900 * time.Millisecond},
	})
}

// TestThrottledRedisTTL: its Redis store sets a key's TTL in whole
// seconds, rounded down, at least 1 (goredisstore: int(ttl.Seconds()),
// Expire's whole seconds), so a key can expire before its tat and the
// next request meets a fresh key; the memstore keeps it. per_hour=1895 is
// a period of 1.8997 s: a key set at 0 lives 1 s, and at 1.5 s the Redis
// store finds none.
func TestThrottledRedisTTL(t *testing.T) {
	params := map[string]string{"per_hour": "1895", "store": "redis"}
	redis := table(t, "throttled", params)
	params["store"] = "memory"
	memory := table(t, "throttled", params)
	for i, tab := range []*limiters.Table{memory, redis} {
		tab.Allow(0, 0, 1)
		d := tab.Allow(0, 1500*ms, 1)
		if want := i == 1; d.Allowed != want {
			t.Errorf("%s store at 1.5 s: %+v, want allowed %v", []string{"memory", "redis"}[i], d, want)
		}
	}
}

// TestThrottledFact: GCRARateLimiter allows MaxBurst+1 at once (its limit
// is quota.MaxBurst + 1, delayVariationTolerance = period * (MaxBurst +
// 1)); PerSec(3)'s period is 333333333 ns, rounded down.
func TestThrottledFact(t *testing.T) {
	tab := table(t, "throttled", map[string]string{"per_sec": "3", "max_burst": "4"})
	for i := 0; i < 5; i++ {
		if d := tab.Allow(0, 0, 1); !d.Allowed {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	if d := tab.Allow(0, 0, 1); d.Allowed || d.RetryAfter != 333333333 {
		t.Fatalf("6th: %+v, want refused, retry after 333333333ns", d)
	}
	if d := tab.Allow(0, 333333333, 1); !d.Allowed {
		t.Fatalf("at one period: %+v", d)
	}
}

// TestNginxNodeExpiry: when nginx creates the node of a new key it first
// deletes up to two least recently used nodes idle for 60 s or more whose
// excess has drained (ngx_http_limit_req_expire). rate=1r/m: A at 0, a
// new key B at 60.5 s, A at 61 s: A's node is gone and A passes (nginx
// 200), where a kept node refuses it (excess 0.024); with B at 59.999 s
// the node is kept and A at 61 s is refused.
func TestNginxNodeExpiry(t *testing.T) {
	for _, c := range []struct {
		b       int64
		allowed bool
	}{{60500 * ms, true}, {59999 * ms, false}} {
		tab := table(t, "nginx", map[string]string{"rate": "1r/m"})
		tab.Allow(0, 0, 1)
		tab.Allow(1, c.b, 1)
		if d := tab.Allow(0, 61*sec, 1); d.Allowed != c.allowed {
			t.Errorf("B at %v, A at 61s: %+v, want allowed %v", time.Duration(c.b), d, c.allowed)
		}
	}
}

// TestNginxZoneFull: a zone full of nodes deletes the least recently used
// one, whatever it holds, for a new key (ngx_http_limit_req_expire(ctx,
// 0)), so the zone's size changes decisions. zone=z:32k holds 191 nodes
// of 4-byte keys (ngx_slab.c's layout: 7 pages, one for the zone's log
// text, 32 nodes of 128 bytes a page, one slot for its tree).
func TestNginxZoneFull(t *testing.T) {
	if n, err := ZoneNodes("z:32k", 4); err != nil || n != 191 {
		t.Fatalf("ZoneNodes(z:32k, 4) = %d, %v; want 191", n, err)
	}
	if n, err := ZoneNodes("one:10m", 4); err != nil || n != 81375 {
		t.Fatalf("ZoneNodes(one:10m, 4) = %d, %v; want 81375", n, err)
	}
	tab := table(t, "nginx", map[string]string{"rate": "1r/s", "zone": "z:32k"})
	if d := tab.Allow(0, 0, 1); !d.Allowed {
		t.Fatal(d)
	}
	for k := uint32(1); k < 191; k++ {
		tab.Allow(k, int64(k)*ms, 1)
	}
	// Key 0 still has its node: refused at 0.5 s.
	if d := tab.Allow(0, 500*ms, 1); d.Allowed {
		t.Fatalf("key 0 with its node: %+v", d)
	}
	// 191 more keys push it out, least recently used first.
	for k := uint32(191); k < 382; k++ {
		tab.Allow(k, 600*ms+int64(k)*ms/100, 1)
	}
	if d := tab.Allow(0, 900*ms, 1); !d.Allowed {
		t.Fatalf("key 0 after its node was deleted: %+v, want allowed", d)
	}
}

// TestNginxConfigLoader: ngx_http_limit_req refuses burst=0 and delay=0
// ("invalid burst value"), and a zone below 8 pages is "too small".
func TestNginxConfigLoader(t *testing.T) {
	p, _ := Lookup("nginx")
	for _, params := range []map[string]string{
		{"rate": "1r/s", "burst": "0"},
		{"rate": "1r/s", "burst": "2", "delay": "0"},
		{"rate": "1r/s", "zone": "z:16k"},
	} {
		if _, _, err := p.Limiter(params); err == nil {
			t.Errorf("%v: accepted", params)
		}
	}
}

// TestNginxFarBack: a time more than 60 s before the node's last is taken
// as 1 ms after it (ngx_http_limit_req_lookup: ms < -60000 means ms = 1),
// and becomes the node's last; up to 60 s back it is taken as no time.
func TestNginxFarBack(t *testing.T) {
	tab := table(t, "nginx", map[string]string{"rate": "1000r/s", "burst": "1", "nodelay": "true"})
	run(t, tab, []step{
		{at: 100 * sec, cost: 1, allowed: true, remaining: 1, retry: 0, reset: -1},
		{at: 100 * sec, cost: 1, allowed: true, remaining: 0, retry: 0, reset: -1},
		{at: 50 * sec, cost: 1, allowed: false, remaining: 0, retry: -1, reset: -1},
		{at: 30 * sec, cost: 1, allowed: true, remaining: 0, retry: 0, reset: -1, state: "excess 1 at 30"},
	})
}

// TestNginxFact: nginx's limit_req documentation ("limit_req zone=one
// burst=5 nodelay"), with rate=1r/s: of 10 requests at once, 6 pass at
// once and 4 are refused; without nodelay the 5 queued wait 1 to 5 s.
// 1r/m is 16 thousandths a second (ngx_http_limit_req_zone: rate * 1000 /
// 60): a node drains a request in 62.5 s, not 60.
func TestNginxFact(t *testing.T) {
	tab := table(t, "nginx", map[string]string{"rate": "1r/s", "burst": "5", "nodelay": "true"})
	passed := 0
	for i := 0; i < 10; i++ {
		if d := tab.Allow(0, 0, 1); d.Allowed {
			passed++
			if d.Delay != 0 {
				t.Fatalf("request %d delayed %v with nodelay", i, d.Delay)
			}
		}
	}
	if passed != 6 {
		t.Fatalf("%d of 10 passed, want 6", passed)
	}
	tab = table(t, "nginx", map[string]string{"rate": "1r/s", "burst": "5"})
	for i := 0; i < 7; i++ {
		d := tab.Allow(0, 0, 1)
		if want := time.Duration(i) * time.Second; i < 6 && (!d.Allowed || d.Delay != want) || i == 6 && d.Allowed {
			t.Fatalf("request %d: %+v, want delay %v", i, d, want)
		}
	}
	tab = table(t, "nginx", map[string]string{"rate": "1r/m", "burst": "1"})
	tab.Allow(0, 0, 1)
	tab.Allow(0, 0, 1)
	if d := tab.Allow(0, 60*sec, 1); d.Allowed || d.RetryAfter != 2500*time.Millisecond {
		t.Fatalf("1r/m at 60s: %+v, want refused, retry after 2.5s", d)
	}
}

// TestSpringDefaultBurst: RedisRateLimiter.Config's burstCapacity is 1
// when not given, not replenishRate. With replenishRate 3 the script's
// TTL, floor(1/3*2), is 0: it stores nothing and every request finds a
// full bucket of 1.
func TestSpringDefaultBurst(t *testing.T) {
	tab := table(t, "spring-cloud-gateway", map[string]string{"replenishRate": "3"})
	for i := 0; i < 10; i++ {
		if d := tab.Allow(0, 0, 1); !d.Allowed || d.Remaining != 0 {
			t.Fatalf("request %d: %+v, want allowed", i, d)
		}
	}
	tab = table(t, "spring-cloud-gateway", map[string]string{"replenishRate": "2"})
	run(t, tab, []step{ // TTL 1: stored, a bucket of 1
		{at: 0, cost: 1, allowed: true, remaining: 0, retry: 0, reset: time.Second},
		{at: 0, cost: 1, allowed: false, remaining: 0, retry: time.Second, reset: time.Second},
	})
}

// TestSpringZeroBurst: burstCapacity=0 (Config allows @Min(0)) leaves
// filled_tokens 0, below any requested, so everything is refused.
func TestSpringZeroBurst(t *testing.T) {
	tab := table(t, "spring-cloud-gateway", map[string]string{"replenishRate": "5", "burstCapacity": "0"})
	for i := 0; i < 5; i++ {
		if d := tab.Allow(0, int64(i)*sec, 1); d.Allowed || d.Reason != limiters.ReasonCost {
			t.Fatalf("request %d: %+v, want refused for ever", i, d)
		}
	}
}

// TestSpringUnevenTokens: requestedTokens 3 from burstCapacity 10 lets 3
// requests through and leaves 1 token, which X-RateLimit-Remaining
// reports (the script returns new_tokens, in tokens, not requests).
func TestSpringUnevenTokens(t *testing.T) {
	tab := table(t, "spring-cloud-gateway", map[string]string{"replenishRate": "10", "burstCapacity": "10", "requestedTokens": "3"})
	run(t, tab, []step{
		{at: 0, cost: 1, allowed: true, remaining: 7, retry: 0, reset: time.Second},
		{at: 0, cost: 1, allowed: true, remaining: 4, retry: 0, reset: time.Second},
		{at: 0, cost: 1, allowed: true, remaining: 1, retry: 0, reset: time.Second},
		{at: 0, cost: 1, allowed: false, remaining: 1, retry: time.Second, reset: time.Second},
	})
}

// TestSpringWholeSeconds: request_rate_limiter.lua reads Redis TIME's
// seconds and refills replenishRate * (now - last_refreshed) tokens: with
// replenishRate=1, burstCapacity=1, a request at 0.5 s takes the token and
// one at 1.2 s passes (a whole second has begun), where an exact bucket
// would hold 0.7 token. A refused request stores its second too.
func TestSpringWholeSeconds(t *testing.T) {
	tab := table(t, "spring-cloud-gateway", map[string]string{"replenishRate": "1", "burstCapacity": "1"})
	run(t, tab, []step{
		{at: sec / 2, cost: 1, allowed: true, remaining: 0, retry: 0, reset: time.Second / 2},
		{at: sec - 1, cost: 1, allowed: false, remaining: 0, retry: 1, reset: 1},
		{at: 12 * sec / 10, cost: 1, allowed: true, remaining: 0, retry: 0, reset: 800 * time.Millisecond, state: "tokens 0 at 1"},
	})
}

// TestHAProxyCountsDenied: track-sc0 updates http_req_rate before the
// deny rule reads it (http_req_get_intercept_rule: update_freq_ctr_period
// on tracking), so a denied request is counted: a client that keeps
// sending 20 a second under "gt 10" per 10 s stays denied, while one
// that pauses gets through again. The rate is (prev * remaining time +
// curr * period) / period (freq_ctr_total).
func TestHAProxyCountsDenied(t *testing.T) {
	tab := table(t, "haproxy", map[string]string{"period": "10s", "limit": "10", "expire": "1m"})
	allowed := 0
	for i := int64(0); i < 400; i++ { // 20 s at 20 a second
		if tab.Allow(0, i*sec/20, 1).Allowed {
			allowed++
		}
	}
	// The first 10 pass; the second period starts with 390... of the first
	// still weighing in, so none passes there.
	if allowed != 10 {
		t.Fatalf("%d allowed, want 10", allowed)
	}
	// Halfway through a period after 30 counted: 30*0.5 + 1 = 16 > 10.
	run(t, table(t, "haproxy", map[string]string{"period": "10s", "limit": "20", "expire": "1m"}), []step{
		{at: 0, cost: 20, allowed: true, remaining: 0, retry: 0, reset: 20 * time.Second},
		{at: sec, cost: 10, allowed: false, remaining: 0, retry: -1, reset: 19 * time.Second, state: "rate 30 (prev 0 curr 30 tick 0)"},
		{at: 15 * sec, cost: 1, allowed: true, remaining: 4, retry: 0, reset: -1, state: "rate 16 (prev 30 curr 1 tick 10000)"},
	})
}

// TestHAProxyOddPeriod: freq_ctr keeps its tick even, bit 0 being the
// rotation lock (update_freq_ctr_period stores curr_tick & ~1): with an
// odd period each rotation moves the period's start back a millisecond.
func TestHAProxyOddPeriod(t *testing.T) {
	tab := table(t, "haproxy", map[string]string{"period": "1001ms", "limit": "100", "expire": "10s"})
	var text []byte
	tab.AllowExplain(0, 0, 1, time.Second, nil)
	_, text = tab.AllowExplain(0, 1001*ms, 1, time.Second, nil)
	if got := string(text); got != "rate 1 (prev 1 curr 1 tick 1000)" {
		t.Fatalf("after a rotation: %q, want the tick at 1000", got)
	}
}

// TestErrors: every problem names the parameter.
func TestErrors(t *testing.T) {
	for _, c := range []struct {
		preset string
		params map[string]string
		want   string
	}{
		{"nginx", map[string]string{"rate": "1r/h"}, `rate "1r/h": want a positive whole number`},
		{"nginx", map[string]string{"rate": "1r/s", "burst": "-1"}, "burst must be at least 1"},
		{"nginx", map[string]string{"rate": "1r/s", "burst": "0"}, "burst must be at least 1"},
		{"nginx", map[string]string{"rate": "1r/s", "burst": "3", "delay": "0"}, "delay must be at least 1"},
		{"nginx", map[string]string{"rate": "1r/s", "nodelay": "yes"}, `nodelay "yes": want true or false`},
		{"nginx", map[string]string{"rate": "1r/s", "nodelay": "true", "delay": "2"}, "nodelay and delay=2"},
		{"nginx", map[string]string{"rate": "1r/s", "zone": "z:16k"}, "too small"},
		{"nginx", map[string]string{"rate": "1r/s", "zone": "z:ten"}, "invalid zone size"},
		{"nginx", map[string]string{"rate": "1r/s", "key_bytes": "3000"}, "key_bytes 3000"},
		{"nginx", map[string]string{"zonename": "one"}, `nginx has no parameter "zonename"`},
		{"envoy", map[string]string{"requests_per_unit": "10", "unit": "fortnight"}, `unit "fortnight"`},
		{"envoy", map[string]string{"unit": "hour"}, "requests_per_unit must be given"},
		{"redis-rate", map[string]string{"rate": "10", "burst": "0"}, "burst must be at least 1"},
		{"redis-rate", map[string]string{"rate": "10", "burst": "1", "period": "0s"}, `period "0s"`},
		{"x-time-rate", map[string]string{"b": "1"}, "give one of r"},
		{"x-time-rate", map[string]string{"r": "1/3", "b": "1"}, `r "1/3"`},
		{"throttled", map[string]string{"per_sec": "1", "per_min": "1"}, "give one of per_sec"},
		{"throttled", map[string]string{"per_sec": "2000000000"}, "period of 0ns"},
		{"throttled", map[string]string{"per_sec": "1", "store": "disk"}, `store "disk"`},
		{"spring-cloud-gateway", map[string]string{"replenishRate": "0"}, "replenishRate must be at least 1"},
		{"spring-cloud-gateway", map[string]string{"replenishRate": "1", "burstCapacity": "-1"}, "burstCapacity must be at least 0"},
		{"haproxy", map[string]string{"period": "10s", "limit": "5"}, "expire must be given"},
		{"haproxy", map[string]string{"period": "10s", "limit": "5", "expire": "15s"}, "below two periods"},
		{"haproxy", map[string]string{"period": "1500us", "limit": "5", "expire": "15s"}, "whole number of milliseconds"},
	} {
		p, _ := Lookup(c.preset)
		_, _, err := p.Limiter(c.params)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.preset, c.params, err, c.want)
		}
	}
}

// TestDocumented: every preset says what it reproduces, what it does not,
// what it ignores, how it reads time and what it was proven against, its
// example builds, and it maps to a library kind (a gateway's that a
// textbook kind expresses exactly may map to that).
func TestDocumented(t *testing.T) {
	kinds := map[limiters.Algorithm]bool{}
	for _, p := range All() {
		if p.Library == "" || p.Reproduces == "" || p.Mapping == "" || p.Burst == "" || p.Example == "" ||
			p.Differences == "" || p.Ignores == "" || p.Time == "" || p.Proven == "" {
			t.Errorf("%s: undocumented", p.Name)
		}
		params := map[string]string{}
		for _, kv := range strings.Split(p.Example, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				v = "true"
			}
			params[k] = v
		}
		a, _, err := p.Limiter(params)
		if err != nil {
			t.Errorf("%s: example %s: %v", p.Name, p.Example, err)
			continue
		}
		if !a.Library() && !isGateway(p.Name) {
			t.Errorf("%s maps to %v, not a library kind", p.Name, a)
		}
		kinds[a] = true
	}
	for _, a := range limiters.LibraryAlgorithms() {
		if !kinds[a] {
			t.Errorf("no preset reaches %v", a)
		}
	}
}
