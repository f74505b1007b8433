package presets

import "testing"

// TestEnvoyLocalFact: envoy.type.v3.TokenBucket's documentation:
// max_tokens "is also the number of tokens that the bucket initially
// contains", and "during each fill interval tokens_per_fill are added to
// the bucket". With 2 tokens and 1 per second: two at 0, none until the
// fill at 1s, then one.
func TestEnvoyLocalFact(t *testing.T) {
	tab := table(t, "envoy-local", map[string]string{"max_tokens": "2", "tokens_per_fill": "1", "fill_interval": "1s"})
	for i, step := range []struct {
		at      int64
		allowed bool
	}{{0, true}, {0, true}, {0, false}, {sec * 9 / 10, false}, {sec, true}, {sec * 3 / 2, false}, {3 * sec, true}, {3 * sec, true}, {3 * sec, false}} {
		if d := tab.Allow(0, step.at, 1); d.Allowed != step.allowed {
			t.Fatalf("step %d at %dns: %+v, want allowed %v", i, step.at, d, step.allowed)
		}
	}
}

// TestKongFact: Kong's rate-limiting plugin documentation: the limits are
// counted per calendar minute (hour, day) in fixed windows, and a request
// over the limit is refused. minute=2: two in the minute's last second
// pass, a third does not, and two more pass as the next minute begins;
// the refused one is not counted.
func TestKongFact(t *testing.T) {
	tab := table(t, "kong", map[string]string{"minute": "2"})
	for i, step := range []struct {
		at      int64
		allowed bool
	}{{59 * sec, true}, {59*sec + sec/2, true}, {59*sec + 9*sec/10, false}, {60 * sec, true}, {60 * sec, true}, {61 * sec, false}} {
		if d := tab.Allow(0, step.at, 1); d.Allowed != step.allowed {
			t.Fatalf("step %d at %dns: %+v, want allowed %v", i, step.at, d, step.allowed)
		}
	}
	if _, _, err := mustLookup(t, "kong").Limiter(map[string]string{"minute": "2", "hour": "10"}); err == nil {
		t.Error("two limits in one preset accepted")
	}
}

// TestTraefikFact: Traefik's rateLimit documentation: "average is the
// maximum rate, by default in requests per second, allowed for the given
// source", over period; "burst is the maximum number of requests allowed
// to go through in the same arbitrarily small period of time", 1 when
// below it. average=2, period=2s, burst=3: three at once, then one per
// second.
func TestTraefikFact(t *testing.T) {
	tab := table(t, "traefik", map[string]string{"average": "2", "period": "2s", "burst": "3"})
	for i, step := range []struct {
		at      int64
		allowed bool
	}{{0, true}, {0, true}, {0, true}, {0, false}, {sec, true}, {sec, false}, {2 * sec, true}} {
		if d := tab.Allow(0, step.at, 1); d.Allowed != step.allowed {
			t.Fatalf("step %d at %dns: %+v, want allowed %v", i, step.at, d, step.allowed)
		}
	}
	tab = table(t, "traefik", map[string]string{"average": "1", "burst": "0"})
	if d := tab.Allow(0, 0, 1); !d.Allowed {
		t.Fatalf("burst 0, first: %+v", d)
	}
	if d := tab.Allow(0, 0, 1); d.Allowed {
		t.Fatalf("burst 0, second at once: %+v", d)
	}
}

// TestCloudflareFact: Cloudflare's "How Cloudflare determines the request
// rate": a rule of 1 request per 10 s period with a 10 minute mitigation
// timeout allows a client's first request, blocks the next within the
// period, and blocks every request of it for the 10 minutes after.
func TestCloudflareFact(t *testing.T) {
	tab := table(t, "cloudflare", map[string]string{"requests_per_period": "1", "period": "10", "mitigation_timeout": "600"})
	for i, step := range []struct {
		at      int64
		allowed bool
	}{{0, true}, {sec, false}, {30 * sec, false}, {600 * sec, false}, {601*sec - 1, false}, {601 * sec, true}} {
		if d := tab.Allow(0, step.at, 1); d.Allowed != step.allowed {
			t.Fatalf("step %d at %dns: %+v, want allowed %v", i, step.at, d, step.allowed)
		}
	}
	if _, _, err := mustLookup(t, "cloudflare").Limiter(map[string]string{"requests_per_period": "1"}); err == nil {
		t.Error("no period accepted")
	}
}

func mustLookup(t *testing.T, name string) *Preset {
	t.Helper()
	p, ok := Lookup(name)
	if !ok {
		t.Fatalf("no preset %s", name)
	}
	return p
}

// TestAPIGatewayFact: Amazon API Gateway's documentation of throttling:
// "the burst limit ... the maximum bucket size", refilled at "the rate
// limit ... requests per second". rateLimit=1, burstLimit=2: two at once,
// a third refused, one more a second later.
func TestAPIGatewayFact(t *testing.T) {
	tab := table(t, "apigw", map[string]string{"rateLimit": "1", "burstLimit": "2"})
	for i, step := range []struct {
		at      int64
		allowed bool
	}{{0, true}, {0, true}, {0, false}, {sec / 2, false}, {sec, true}, {sec, false}} {
		if d := tab.Allow(0, step.at, 1); d.Allowed != step.allowed {
			t.Fatalf("step %d at %dns: %+v, want allowed %v", i, step.at, d, step.allowed)
		}
	}
}
