package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// lane resolves a --limiter.
func lane(t *testing.T, s string) sim.Lane {
	t.Helper()
	l, err := spec.ParseLimiter(s)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.Resolve(spec.Inputs{Limiters: []spec.Limiter{l}, Single: true})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := plan.Bind(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return sp.Lanes[0]
}

// TestRoundTrips: export, then reading what it wrote (--policy-from, or
// the --limiter of a Go library's export), decides exactly as the
// limiter it came from, for every target, where the target expresses the
// limiter.
func TestRoundTrips(t *testing.T) {
	for _, tc := range []struct{ target, limiter string }{
		// nginx's queue as --policy-from reads it (nginx's own kind keeps a
		// zone, which a stack does not replay).
		{"nginx", "tick-queue:capacity=3,rate=333/1000s,tick=1ms,parts=1000,delay=2,clock=clamp"},
		{"nginx", "tick-queue:capacity=5,rate=500/1000s,tick=1ms,parts=1000,delay=0,clock=clamp"},
		{"nginx", "tick-queue:capacity=3,rate=1/2s,tick=1ms,parts=1000,delay=1,clock=clamp"},
		{"nginx", "tick-queue:capacity=1,rate=1,tick=1ms,parts=1000,clock=clamp"},
		{"envoy", "envoy:requests_per_unit=3,unit=second"},
		{"envoy", "envoy:requests_per_unit=20,unit=minute"},
		{"envoy-local", "envoy-local:max_tokens=4,tokens_per_fill=2,fill_interval=1s"},
		{"kong", "kong:second=2"},
		{"kong", "fixed-window:limit=10,window=1m"},
		{"traefik", "traefik:average=3,period=2s,burst=4"},
		{"traefik", "token-bucket:capacity=5,rate=1/1s"},
		{"apigw", "token-bucket:capacity=3,rate=1/2s"},
		{"apigw", "apigw:rateLimit=1,burstLimit=2"},
		{"redis-rate", "redis-rate:rate=2,burst=3,period=1s"},
		{"redis-rate", "redis-rate:rate=3,burst=4,period=2s"},
		{"x-time-rate", "x-time-rate:r=1.5,b=2"},
		{"x-time-rate", "x-time-rate:every=3s,b=3"},
		{"haproxy", "haproxy:period=10s,limit=3,expire=30s"},
		{"haproxy", "haproxy:period=1500ms,limit=2,expire=3s"},
		{"cloudflare", "cloudflare:requests_per_period=2,period=10,mitigation_timeout=60"},
		{"cloudflare", "blocking-counter:limit=5,window=1m,block=10m"},
	} {
		t.Run(tc.target+" "+tc.limiter, func(t *testing.T) {
			l := lane(t, tc.limiter)
			ex, err := Export(tc.target, l)
			if err != nil {
				t.Fatal(err)
			}
			if !ex.Exact {
				t.Fatalf("not exact: %v\n%s", ex.Notes, ex.Text)
			}
			var cfg *Config
			if ex.Limiter != "" {
				back, err := spec.ParseLimiter(ex.Limiter)
				if err != nil {
					t.Fatal(err)
				}
				cfg = &Config{File: &spec.File{Policies: []spec.StackPolicy{{Limiter: back, Key: []string{"ip"}}}}}
			} else if cfg, err = ReadBack(tc.target, ex, "ip"); err != nil {
				t.Fatalf("%v\n%s", err, ex.Text)
			}
			key := []string{"ip"}
			if len(cfg.File.Policies) == 1 && len(cfg.File.Policies[0].Key) == 0 {
				key = []string{} // local_ratelimit: one bucket for every request
			}
			r, err := traces.NewReader(strings.NewReader(testTrace("/")), "trace.csv", traces.Options{})
			if err != nil {
				t.Fatal(err)
			}
			d, err := Compare(r, l, key, cfg, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if d.Differ != 0 {
				t.Errorf("%d of %d requests decided apart (%d allowed, exported %d)\n%s", d.Differ, d.Requests, d.Allowed, d.ExportAllowed, ex.Text)
			}
			if d.Allowed == 0 || d.Allowed == d.Requests {
				t.Errorf("%d of %d allowed: the trace does not exercise the limiter", d.Allowed, d.Requests)
			}
		})
	}
}

// TestExportApproximates: where the target cannot say the limiter, the
// export says so and what it wrote instead, and replaying shows the
// difference.
func TestExportApproximates(t *testing.T) {
	for _, tc := range []struct{ target, limiter, note string }{
		{"nginx", "token-bucket:capacity=5,rate=1/3s", "nginx keeps rates in whole thousandths of a request per second: 1 per 3s written as 20r/m"},
		{"envoy", "token-bucket:capacity=5,rate=1/3s", "Envoy's windows are a second, minute, hour, day, week, month (30 days) or year (365 days): 1 per 3s written as 20 per minute"},
		{"kong", "sliding-log:limit=10,window=90s", "Kong's windows are the calendar second, minute, hour and day: 10 per 1m30s written as 6 per minute"},
		{"x-time-rate", "token-bucket:capacity=2,rate=3/7ns", "3 per 7ns is neither a decimal per second nor one per whole nanoseconds"},
		{"haproxy", "sliding-counter:limit=4,window=2500us", "HAProxy's periods are whole milliseconds: 4 per 2.5ms written as 4 per 3ms"},
		{"haproxy", "fixed-window:limit=4,window=10s", "fixed-window is not HAProxy's http_req_rate"},
		{"cloudflare", "sliding-counter:limit=4,window=1500ms", "Cloudflare's period and mitigation_timeout are whole seconds: written as 2s and 0s"},
		{"cloudflare", "token-bucket:capacity=5,rate=1/1s", "token-bucket is not Cloudflare's counter"},
	} {
		t.Run(tc.target+" "+tc.limiter, func(t *testing.T) {
			ex, err := Export(tc.target, lane(t, tc.limiter))
			if err != nil {
				t.Fatal(err)
			}
			if ex.Exact {
				t.Fatal("exact")
			}
			if !strings.Contains(strings.Join(ex.Notes, "\n"), tc.note) {
				t.Errorf("notes:\n%s\nwant %q", strings.Join(ex.Notes, "\n"), tc.note)
			}
		})
	}
	ex, err := Export("envoy", lane(t, "token-bucket:capacity=5,rate=1/1s"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ReadBack("envoy", ex, "ip")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := traces.NewReader(strings.NewReader(testTrace("/")), "trace.csv", traces.Options{})
	d, err := Compare(r, lane(t, "token-bucket:capacity=5,rate=1/1s"), []string{"ip"}, cfg, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if d.Differ == 0 {
		t.Error("a fixed window decides a token bucket's trace exactly as it: the trace shows no difference")
	}
}
