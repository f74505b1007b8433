package presets

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratesim/ratesim/limiters"
)

const sec = int64(time.Second)

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

// TestXTimeRateFact: golang.org/x/time/rate's documentation of
// NewLimiter: "it allows events up to rate r and permits bursts of at
// most b tokens". NewLimiter(1, 3): three at t=0 pass, a fourth fails, one
// more passes at t=1.
func TestXTimeRateFact(t *testing.T) {
	tab := table(t, "x-time-rate", map[string]string{"r": "1", "b": "3"})
	for i := 0; i < 3; i++ {
		if d := tab.Allow(0, 0, 1); !d.Allowed {
			t.Fatalf("request %d at 0: %+v", i, d)
		}
	}
	if d := tab.Allow(0, 0, 1); d.Allowed || d.RetryAfter != time.Second {
		t.Fatalf("fourth at 0: %+v, want refused, retry after 1s", d)
	}
	if d := tab.Allow(0, sec, 1); !d.Allowed {
		t.Fatalf("at 1s: %+v", d)
	}
	if d := tab.Allow(0, sec, 1); d.Allowed {
		t.Fatalf("second at 1s: %+v", d)
	}
}

// TestXTimeRateAgrees: the preset decides as golang.org/x/time/rate
// itself, AllowN(t, n) on a fake clock, over random sequences in time
// order (x/time/rate moves its clock back for an earlier time), with r
// and every, costs up to b+1, on a millisecond grid where float64 holds
// the tokens exactly enough.
func TestXTimeRateAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	base := time.Unix(1_700_000_000, 0)
	for trial := 0; trial < 300; trial++ {
		b := 1 + rng.IntN(8)
		var lim *rate.Limiter
		params := map[string]string{"b": strconv.Itoa(b)}
		if rng.IntN(2) == 0 {
			r := []string{"0.5", "1", "2", "4", "8", "0.25"}[rng.IntN(6)]
			params["r"] = r
			f := map[string]float64{"0.5": 0.5, "1": 1, "2": 2, "4": 4, "8": 8, "0.25": 0.25}[r]
			lim = rate.NewLimiter(rate.Limit(f), b)
		} else {
			every := time.Duration(1+rng.IntN(4)) * 250 * time.Millisecond
			params["every"] = every.String()
			lim = rate.NewLimiter(rate.Every(every), b)
		}
		tab := table(t, "x-time-rate", params)
		ts := int64(0)
		for i := 0; i < 300; i++ {
			ts += int64(rng.IntN(700)) * int64(time.Millisecond) * int64(rng.IntN(2))
			n := 1 + rng.IntN(b+1)
			want := lim.AllowN(base.Add(time.Duration(ts)), n)
			if got := tab.Allow(0, ts, int64(n)); got.Allowed != want {
				t.Fatalf("trial %d %v: request %d (t=%v n=%d): %+v, x/time/rate %v", trial, params, i, time.Duration(ts), n, got, want)
			}
		}
	}
}

// TestRedisRateFact: go-redis/redis_rate's README example, Allow with
// redis_rate.PerSecond(10): 10 of 11 requests at once pass, and the 11th
// gets retry_after 100ms and reset_after 1s (its Lua script: retry_after
// = allow_at - now, reset_after = tat - now).
func TestRedisRateFact(t *testing.T) {
	tab := table(t, "redis-rate", map[string]string{"rate": "10", "burst": "10", "period": "1s"})
	for i := 0; i < 10; i++ {
		if d := tab.Allow(0, 0, 1); !d.Allowed || d.Remaining != int64(9-i) {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	d := tab.Allow(0, 0, 1)
	if d.Allowed || d.RetryAfter != 100*time.Millisecond || d.ResetAfter != time.Second {
		t.Fatalf("11th: %+v, want refused, retry after 100ms, reset after 1s", d)
	}
	// A cost above the burst is refused and changes nothing.
	tab = table(t, "redis-rate", map[string]string{"rate": "10", "burst": "10"})
	if d := tab.Allow(0, 0, 11); d.Allowed || d.Reason != limiters.ReasonCost {
		t.Fatalf("cost 11: %+v", d)
	}
	if d := tab.Allow(0, 0, 10); !d.Allowed {
		t.Fatalf("cost 10 after it: %+v", d)
	}
}

// TestNginxFact: nginx's limit_req documentation (ngx_http_limit_req_module,
// "limit_req zone=one burst=5 nodelay"), with rate=1r/s: of 10 requests at
// once, 6 pass at once (the one served and 5 of burst) and 4 are refused.
// Without nodelay the 5 queued wait 1, 2, ..., 5 seconds.
func TestNginxFact(t *testing.T) {
	tab := table(t, "nginx", map[string]string{"rate": "1r/s", "burst": "5", "nodelay": "true"})
	passed := 0
	for i := 0; i < 10; i++ {
		d := tab.Allow(0, 0, 1)
		if d.Allowed {
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
	// 1r/m is 16 thousandths a second (ngx_http_limit_req_zone: rate * 1000
	// / 60): the next request passes after 62.5 s, not 60.
	tab = table(t, "nginx", map[string]string{"rate": "1r/m"})
	tab.Allow(0, 0, 1)
	if d := tab.Allow(0, 60*sec, 1); d.Allowed || d.RetryAfter != 2500*time.Millisecond {
		t.Fatalf("1r/m at 60s: %+v, want refused, retry after 2.5s", d)
	}
}

// TestEnvoyFact: Envoy's ratelimit counts every hit toward the window
// (envoyproxy/ratelimit src/redis/fixed_cache_impl.go: INCRBY before the
// comparison in src/limiter/base_limiter.go). A key that sent 50 requests
// in an hour under 10/hour, then gets its limit raised to 20, is still
// refused for the rest of that hour: its counter already holds 50.
func TestEnvoyFact(t *testing.T) {
	p, _ := Lookup("envoy")
	a, pol10, err := p.Limiter(map[string]string{"requests_per_unit": "10", "unit": "hour"})
	if err != nil {
		t.Fatal(err)
	}
	r10, _ := limiters.NewRule(a, pol10)
	var s limiters.FixedWindowHitsState
	allowed := 0
	for i := int64(0); i < 50; i++ {
		var d limiters.Decision
		s, d = s.Step(r10, i*sec, 1)
		if d.Allowed {
			allowed++
		}
	}
	if allowed != 10 {
		t.Fatalf("%d of 50 allowed under 10/hour", allowed)
	}
	_, pol20, _ := p.Limiter(map[string]string{"requests_per_unit": "20", "unit": "hour"})
	r20, _ := limiters.NewRule(a, pol20)
	for ts := int64(60); ts < 3600; ts += 60 {
		var d limiters.Decision
		if s, d = s.Step(r20, ts*sec, 1); d.Allowed || d.Reason != limiters.ReasonOverLimit {
			t.Fatalf("at %ds under 20/hour: %+v, want refused", ts, d)
		}
	}
	if _, d := s.Step(r20, 3600*sec, 1); !d.Allowed {
		t.Fatalf("next hour: %+v", d)
	}
	// stop_when_over: refused hits are not counted, so the raised limit
	// lets 10 more through.
	a, polStop, _ := p.Limiter(map[string]string{"requests_per_unit": "10", "unit": "hour", "stop_when_over": "true"})
	tab, _ := limiters.NewTable(a, polStop)
	for i := int64(0); i < 50; i++ {
		tab.Allow(0, i*sec, 1)
	}
	if d := tab.Allow(0, 50*sec, 1); d.Allowed || d.Remaining != 0 {
		t.Fatalf("stop_when_over: %+v", d)
	}
	if a != limiters.FixedWindow {
		t.Fatalf("stop_when_over maps to %v", a)
	}
}

// TestEnvoyNearLimit: the near-limit threshold is floor(limit * 0.8), as
// base_limiter.go computes nearLimitThreshold; hits above it and within
// the limit are near, the rest over (checkNearLimitThreshold,
// checkOverLimitThreshold).
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

// TestThrottledFact: throttled's GCRARateLimiter allows MaxBurst+1 at once
// (its limit is quota.MaxBurst + 1, delayVariationTolerance = period *
// (MaxBurst + 1)); PerSec(3)'s period is 333333333ns, rounded down.
func TestThrottledFact(t *testing.T) {
	tab := table(t, "throttled", map[string]string{"per_sec": "3", "max_burst": "4"})
	for i := 0; i < 5; i++ {
		if d := tab.Allow(0, 0, 1); !d.Allowed {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	d := tab.Allow(0, 0, 1)
	if d.Allowed || d.RetryAfter != 333333333 {
		t.Fatalf("6th: %+v, want refused, retry after 333333333ns", d)
	}
	if d := tab.Allow(0, 333333333, 1); !d.Allowed {
		t.Fatalf("at one period: %+v", d)
	}
}

// TestSpringCloudGatewayFact: request_rate_limiter.lua reads Redis TIME's
// seconds and refills replenishRate * (now - last_refreshed) tokens: with
// replenishRate=1, burstCapacity=1, a request at 0.5 s takes the token and
// one at 1.2 s passes (a whole second has begun), where an exact bucket
// would hold 0.7 token. requestedTokens=60 with burstCapacity=60 is one
// request a minute.
func TestSpringCloudGatewayFact(t *testing.T) {
	tab := table(t, "spring-cloud-gateway", map[string]string{"replenishRate": "1", "burstCapacity": "1"})
	if d := tab.Allow(0, sec/2, 1); !d.Allowed {
		t.Fatalf("at 0.5s: %+v", d)
	}
	if d := tab.Allow(0, sec-1, 1); d.Allowed || d.RetryAfter != 1 {
		t.Fatalf("at 1s-1ns: %+v, want refused, retry after 1ns", d)
	}
	if d := tab.Allow(0, 12*sec/10, 1); !d.Allowed || d.Delay != 0 {
		t.Fatalf("at 1.2s: %+v", d)
	}
	tab = table(t, "spring-cloud-gateway", map[string]string{"replenishRate": "1", "burstCapacity": "60", "requestedTokens": "60"})
	if d := tab.Allow(0, 0, 1); !d.Allowed {
		t.Fatalf("first: %+v", d)
	}
	if d := tab.Allow(0, 59*sec, 1); d.Allowed || d.RetryAfter != time.Second {
		t.Fatalf("at 59s: %+v", d)
	}
	if d := tab.Allow(0, 60*sec, 1); !d.Allowed {
		t.Fatalf("at 60s: %+v", d)
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
		{"nginx", map[string]string{"rate": "1r/s", "burst": "-1"}, "burst must be at least 0"},
		{"nginx", map[string]string{"rate": "1r/s", "nodelay": "yes"}, `nodelay "yes": want true or false`},
		{"nginx", map[string]string{"rate": "1r/s", "nodelay": "true", "delay": "2"}, "nodelay and delay=2"},
		{"nginx", map[string]string{"zone": "one"}, `nginx has no parameter "zone"`},
		{"envoy", map[string]string{"requests_per_unit": "10", "unit": "week"}, `unit "week"`},
		{"envoy", map[string]string{"unit": "hour"}, "requests_per_unit must be given"},
		{"redis-rate", map[string]string{"rate": "10", "burst": "0"}, "burst must be at least 1"},
		{"redis-rate", map[string]string{"rate": "10", "burst": "1", "period": "0s"}, `period "0s"`},
		{"x-time-rate", map[string]string{"b": "1"}, "give one of r"},
		{"x-time-rate", map[string]string{"r": "1/3", "b": "1"}, `r "1/3"`},
		{"throttled", map[string]string{"per_sec": "1", "per_min": "1"}, "give one of per_sec"},
		{"throttled", map[string]string{"per_sec": "2000000000"}, "period of 0ns"},
		{"spring-cloud-gateway", map[string]string{"replenishRate": "1", "burstCapacity": "10", "requestedTokens": "3"}, "does not divide"},
		{"spring-cloud-gateway", map[string]string{"replenishRate": "10", "burstCapacity": "4"}, "TTL is 0"},
	} {
		p, _ := Lookup(c.preset)
		_, _, err := p.Limiter(c.params)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.preset, c.params, err, c.want)
		}
	}
}

// TestDocumented: every preset says what it reproduces and maps, and its
// example builds.
func TestDocumented(t *testing.T) {
	for _, p := range All() {
		if p.Library == "" || p.Reproduces == "" || p.Mapping == "" || p.Burst == "" || p.Example == "" {
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
		if _, _, err := p.Limiter(params); err != nil {
			t.Errorf("%s: example %s: %v", p.Name, p.Example, err)
		}
	}
}
